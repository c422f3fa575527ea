// Stub for the KOTS oracle (tests/kots-oracle): only the identifiers replicatedhq/kots
// pkg/template uses, answering as KOTS does with no cluster, no registry and no license.
// Written for this project; not upstream code.
package cert

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
)

// ParseCertsPEM returns the certificates of a PEM text, as client-go's does.
func ParseCertsPEM(pemCerts []byte) ([]*x509.Certificate, error) {
	certs := []*x509.Certificate{}
	for len(pemCerts) > 0 {
		var block *pem.Block
		block, pemCerts = pem.Decode(pemCerts)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" || len(block.Headers) != 0 {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return certs, err
		}
		certs = append(certs, cert)
	}
	if len(certs) == 0 {
		return nil, errors.New("data does not contain any valid RSA or ECDSA certificates")
	}
	return certs, nil
}
