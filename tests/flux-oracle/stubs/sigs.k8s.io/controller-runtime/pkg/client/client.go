// Package client is the Flux oracle's stand-in for controller-runtime's client: only what
// fluxcd/pkg/kustomize's SubstituteVariables calls (Get). This project's code, not upstream's.
package client

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// Object is a Kubernetes object with metadata.
type Object interface {
	metav1.Object
	runtime.Object
}

// ObjectKey names an object.
type ObjectKey = types.NamespacedName

// GetOption is an option of Get (none are used).
type GetOption interface{}

// Client reads objects from the cluster.
type Client interface {
	Get(ctx context.Context, key ObjectKey, obj Object, opts ...GetOption) error
}
