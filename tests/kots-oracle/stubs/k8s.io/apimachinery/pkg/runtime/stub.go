// Stub for the KOTS oracle (tests/kots-oracle): only the identifiers replicatedhq/kots
// pkg/template uses, answering as KOTS does with no cluster, no registry and no license.
// Written for this project; not upstream code.
package runtime

type Object interface{}

type RawExtension struct {
	Raw []byte `json:"-"`
}

func (re *RawExtension) UnmarshalJSON(in []byte) error {
	re.Raw = append(re.Raw[0:0], in...)
	return nil
}
