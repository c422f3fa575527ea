// Package clientcmd is this project's stand-in for client-go's clientcmd in the Windsor oracle:
// there is no cluster.
package clientcmd

import (
	"errors"

	"k8s.io/client-go/rest"
)

// BuildConfigFromFlags always fails.
func BuildConfigFromFlags(string, string) (*rest.Config, error) {
	return nil, errors.New("windsor-oracle: no cluster")
}
