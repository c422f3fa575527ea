// Package kubernetes is this project's stand-in for client-go's clientset in the Windsor oracle:
// there is no cluster, so every list fails.
package kubernetes

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

var errNoCluster = errors.New("windsor-oracle: no cluster")

// Clientset is a cluster client.
type Clientset struct{}

// NewForConfig always fails.
func NewForConfig(*rest.Config) (*Clientset, error) { return nil, errNoCluster }

// CoreV1Client is the core/v1 client.
type CoreV1Client struct{}

// CoreV1 gives the core/v1 client.
func (*Clientset) CoreV1() CoreV1Client { return CoreV1Client{} }

// PVCs lists PersistentVolumeClaims.
type PVCs struct{}

// PersistentVolumeClaims gives the PVC client for a namespace.
func (CoreV1Client) PersistentVolumeClaims(string) PVCs { return PVCs{} }

// List always fails.
func (PVCs) List(context.Context, metav1.ListOptions) (*corev1.PersistentVolumeClaimList, error) {
	return nil, errNoCluster
}
