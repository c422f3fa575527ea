// Stub for the KOTS oracle (tests/kots-oracle): only the identifiers replicatedhq/kots
// pkg/template uses, answering as KOTS does with no cluster, no registry and no license.
// Written for this project; not upstream code.
// build.sh appends KOTS's own SecretNameFromPrefix (pkg/docker/registry/registry.go) to this
// package in the scratch GOPATH.
package registry

import (
	"errors"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	kotsv1beta1 "github.com/replicatedhq/kotskinds/apis/kots/v1beta1"
	"github.com/replicatedhq/kotskinds/pkg/licensewrapper"
)

type RegistryProxyInfo struct {
	Registry string
	Proxy    string
	Upstream string
}

func (r *RegistryProxyInfo) ToSlice() []string { return []string{r.Proxy, r.Registry} }

type Credentials struct {
	Username string
	Password string
}

type ImagePullSecrets struct {
	AdminConsoleSecret *corev1.Secret
	AppSecret          *corev1.Secret
	DockerHubSecret    *corev1.Secret
}

func GetDockerHubCredentials(clientset kubernetes.Interface, namespace string) (Credentials, error) {
	return Credentials{}, errors.New("oracle: no cluster")
}

func GetRegistryProxyInfo(license *licensewrapper.LicenseWrapper, installation *kotsv1beta1.Installation, app *kotsv1beta1.Application) (*RegistryProxyInfo, error) {
	return nil, errors.New("oracle: no license or registry")
}

func PullSecretForRegistries(registries []string, username, password string, appNamespace string, namePrefix string) (ImagePullSecrets, error) {
	return ImagePullSecrets{}, errors.New("oracle: no registry")
}
