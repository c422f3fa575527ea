// Stub for the KOTS oracle (tests/kots-oracle): only the identifiers replicatedhq/kots
// pkg/template uses, answering as KOTS does with no cluster, no registry and no license.
// Written for this project; not upstream code.
package kubernetes

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
)

type NodeInterface interface {
	List(ctx context.Context, opts metav1.ListOptions) (*corev1.NodeList, error)
}

type CoreV1Interface interface{ Nodes() NodeInterface }

type DiscoveryInterface interface {
	ServerVersion() (*version.Info, error)
}

type Interface interface {
	CoreV1() CoreV1Interface
	Discovery() DiscoveryInterface
}
