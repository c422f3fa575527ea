// Stub for the KOTS oracle (tests/kots-oracle): only the identifiers replicatedhq/kots
// pkg/template uses, answering as KOTS does with no cluster, no registry and no license.
// Written for this project; not upstream code.
package k8sutil

import (
	"errors"

	"k8s.io/client-go/kubernetes"
)

type Config struct{}

func GetClientset() (kubernetes.Interface, error) { return nil, errors.New("oracle: no cluster") }

func GetClusterConfig() (*Config, error) { return nil, errors.New("oracle: no cluster") }

func IsOpenShift(clientset kubernetes.Interface) bool { return false }
