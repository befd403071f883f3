package ownership

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
)

// Owner identifies a custom resource that owns a release.
type Owner struct {
	GVK       schema.GroupVersionKind
	Namespace string
	Name      string
	UID       types.UID
}

// Key is the value of the owner annotation: "<group>/<Kind>/<namespace>/<name>".
func (o Owner) Key() string {
	return fmt.Sprintf("%s/%s/%s/%s", o.GVK.Group, o.GVK.Kind, o.Namespace, o.Name)
}

// KindLabel is the value of the owner-kind label of the owner's release
// Secrets, "<Kind>.<group>", and false when that is not a valid label value
// (longer than 63 characters).
func (o Owner) KindLabel() (string, bool) {
	v := o.GVK.GroupKind().String()
	return v, len(validation.IsValidLabelValue(v)) == 0
}

// ParseKey reads an owner annotation into group kind and namespaced name.
func ParseKey(s string) (schema.GroupKind, types.NamespacedName, bool) {
	parts := strings.Split(s, "/")
	if len(parts) != 4 || parts[1] == "" || parts[3] == "" {
		return schema.GroupKind{}, types.NamespacedName{}, false
	}
	return schema.GroupKind{Group: parts[0], Kind: parts[1]}, types.NamespacedName{Namespace: parts[2], Name: parts[3]}, true
}

// Reference is the ownerReference released objects get.
func (o Owner) Reference() metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion:         o.GVK.GroupVersion().String(),
		Kind:               o.GVK.Kind,
		Name:               o.Name,
		UID:                o.UID,
		Controller:         ptr.To(true),
		BlockOwnerDeletion: ptr.To(true),
	}
}
