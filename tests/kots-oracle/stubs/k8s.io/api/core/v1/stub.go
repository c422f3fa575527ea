// Stub for the KOTS oracle (tests/kots-oracle): only the identifiers replicatedhq/kots
// pkg/template uses, answering as KOTS does with no cluster, no registry and no license.
// Written for this project; not upstream code.
package v1

type Node struct{}

type NodeList struct{ Items []Node }

type Secret struct{ Data map[string][]byte }

type LocalObjectReference struct {
	Name string `json:"name,omitempty"`
}

type SecretKeySelector struct {
	LocalObjectReference `json:",inline"`
	Key                  string `json:"key"`
	Optional             *bool  `json:"optional,omitempty"`
}
