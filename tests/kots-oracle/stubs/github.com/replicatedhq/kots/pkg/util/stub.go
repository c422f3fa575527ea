// Stub for the KOTS oracle (tests/kots-oracle): only the identifiers replicatedhq/kots
// pkg/template uses, answering as KOTS does with no cluster, no registry and no license.
// Written for this project; not upstream code.
package util

import "os"

// As KOTS: the namespace kotsadm runs in, from its environment.
var PodNamespace = os.Getenv("POD_NAMESPACE")
