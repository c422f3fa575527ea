// Stub for the KOTS oracle (tests/kots-oracle): only the identifiers replicatedhq/kots
// pkg/template uses, answering as KOTS does with no cluster, no registry and no license.
// Written for this project; not upstream code.
// The license part: the oracle has no license, so every wrapper is empty, as KOTS's is for an
// app without one.
package licensewrapper

type EntitlementField struct{ Value interface{} }

func (e EntitlementField) GetValue() interface{} { return e.Value }

type LicenseWrapper struct{}

func (w *LicenseWrapper) IsEmpty() bool                          { return true }
func (w *LicenseWrapper) GetAppSlug() string                     { return "" }
func (w *LicenseWrapper) GetChannelID() string                   { return "" }
func (w *LicenseWrapper) GetChannelName() string                 { return "" }
func (w *LicenseWrapper) GetCustomerEmail() string               { return "" }
func (w *LicenseWrapper) GetCustomerName() string                { return "" }
func (w *LicenseWrapper) GetEndpoint() string                    { return "" }
func (w *LicenseWrapper) GetLicenseID() string                   { return "" }
func (w *LicenseWrapper) GetLicenseSequence() int64              { return 0 }
func (w *LicenseWrapper) GetSignature() []byte                   { return nil }
func (w *LicenseWrapper) GetLicenseType() string                 { return "" }
func (w *LicenseWrapper) GetReplicatedProxyDomain() string       { return "" }
func (w *LicenseWrapper) GetEntitlements() map[string]EntitlementField { return nil }
func (w *LicenseWrapper) IsAirgapSupported() bool                { return false }
func (w *LicenseWrapper) IsDisasterRecoverySupported() bool      { return false }
func (w *LicenseWrapper) IsEmbeddedClusterDownloadEnabled() bool { return false }
func (w *LicenseWrapper) IsEmbeddedClusterMultiNodeEnabled() bool { return false }
func (w *LicenseWrapper) IsGeoaxisSupported() bool               { return false }
func (w *LicenseWrapper) IsGitOpsSupported() bool                { return false }
func (w *LicenseWrapper) IsIdentityServiceSupported() bool       { return false }
func (w *LicenseWrapper) IsSemverRequired() bool                 { return false }
func (w *LicenseWrapper) IsSnapshotSupported() bool              { return false }
func (w *LicenseWrapper) IsSupportBundleUploadSupported() bool   { return false }
