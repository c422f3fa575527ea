// Package ssa is the Flux oracle's stand-in for fluxcd/pkg/ssa's ResourceManager, holding only
// its owner; build.sh appends the upstream SetOwnerLabels method. This project's code.
package ssa

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Owner is the field manager and the group of the owner labels.
type Owner struct {
	Field string
	Group string
}

// ResourceManager holds the owner; the cluster side is left out.
type ResourceManager struct {
	owner Owner
}

// NewResourceManager makes a manager without a cluster.
func NewResourceManager(owner Owner) *ResourceManager {
	return &ResourceManager{owner: owner}
}

var _ []*unstructured.Unstructured
