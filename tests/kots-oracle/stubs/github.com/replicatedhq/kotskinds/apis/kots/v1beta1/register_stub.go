// Stub for the KOTS oracle (tests/kots-oracle): only the identifiers replicatedhq/kots
// pkg/template uses, answering as KOTS does with no cluster, no registry and no license.
// Written for this project; not upstream code.
// Stands for kotskinds' register.go (the Kubernetes scheme), which the oracle does not need.
package v1beta1

type schemeBuilder struct{}

func (schemeBuilder) Register(objects ...interface{}) {}

var SchemeBuilder = schemeBuilder{}
