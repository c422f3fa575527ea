// Stub for the KOTS oracle (tests/kots-oracle): only the identifiers replicatedhq/kots
// pkg/template uses, answering as KOTS does with no cluster, no registry and no license.
// Written for this project; not upstream code.
package v1beta1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

type InstallerSpec struct{}

type Installer struct {
	metav1.ObjectMeta
	Spec InstallerSpec
}

type InstallerList struct{ Items []Installer }
