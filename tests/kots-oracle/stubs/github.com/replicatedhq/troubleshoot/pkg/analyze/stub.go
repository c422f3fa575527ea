// Stub for the KOTS oracle (tests/kots-oracle): only the identifiers replicatedhq/kots
// pkg/template uses, answering as KOTS does with no cluster, no registry and no license.
// Written for this project; not upstream code.
package analyze

import corev1 "k8s.io/api/core/v1"

func ParseNodesForProviders(nodes []corev1.Node) (interface{}, string) { return nil, "" }
