// Stub for the KOTS oracle (tests/kots-oracle): only the identifiers replicatedhq/kots
// pkg/template uses, answering as KOTS does with no cluster, no registry and no license.
// Written for this project; not upstream code.
package logger

import (
	"fmt"
	"os"
)

func Warnf(template string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "warn: "+template+"\n", args...)
}
