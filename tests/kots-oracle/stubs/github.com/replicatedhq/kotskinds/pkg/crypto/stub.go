// Stub for the KOTS oracle (tests/kots-oracle): only the identifiers replicatedhq/kots
// pkg/template uses, answering as KOTS does with no cluster, no registry and no license.
// Written for this project; not upstream code.
package crypto

import "errors"

func Encrypt(in []byte) []byte { return nil }

func Decrypt(in []byte) ([]byte, error) { return nil, errors.New("oracle: no encryption key") }
