// The Flux oracle's stand-in for FmtUnstructured of fluxcd/pkg/ssa/utils (fmt.go, which needs
// fluxcd/cli-utils): an object as KIND/NAMESPACE/NAME (KIND/NAME without a namespace), as the
// upstream one writes it in normalize's errors. This project's code.
package utils

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// FmtUnstructured names an object in messages.
func FmtUnstructured(obj *unstructured.Unstructured) string {
	s := obj.GetKind() + "/"
	if obj.GetNamespace() != "" {
		s += obj.GetNamespace() + "/"
	}
	return s + obj.GetName()
}
