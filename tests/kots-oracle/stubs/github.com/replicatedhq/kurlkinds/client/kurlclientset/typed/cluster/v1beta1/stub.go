// Stub for the KOTS oracle (tests/kots-oracle): only the identifiers replicatedhq/kots
// pkg/template uses, answering as KOTS does with no cluster, no registry and no license.
// Written for this project; not upstream code.
package v1beta1

import (
	"context"
	"errors"

	kurlv1beta1 "github.com/replicatedhq/kurlkinds/pkg/apis/cluster/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type InstallerInterface interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*kurlv1beta1.Installer, error)
	List(ctx context.Context, opts metav1.ListOptions) (*kurlv1beta1.InstallerList, error)
}

type Client struct{}

func NewForConfigOrDie(c interface{}) *Client { return &Client{} }

func (c *Client) Installers(namespace string) InstallerInterface { return installers{} }

type installers struct{}

func (installers) Get(context.Context, string, metav1.GetOptions) (*kurlv1beta1.Installer, error) {
	return nil, errors.New("oracle: no cluster")
}

func (installers) List(context.Context, metav1.ListOptions) (*kurlv1beta1.InstallerList, error) {
	return nil, errors.New("oracle: no cluster")
}
