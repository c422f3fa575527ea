// Stub for the KOTS oracle (tests/kots-oracle): only the identifiers replicatedhq/kots
// pkg/template uses, answering as KOTS does with no cluster, no registry and no license.
// Written for this project; not upstream code.
package engine

import "errors"

func NewLookupFunction(config interface{}) func(string, string, string, string) (map[string]interface{}, error) {
	return func(string, string, string, string) (map[string]interface{}, error) {
		return nil, errors.New("oracle: no cluster")
	}
}
