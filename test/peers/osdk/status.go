package osdk

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// The status operator-sdk's Helm operator writes to a custom resource
// (internal/helm/internal/types): its own condition type, whose reason and
// message may be empty, and the deployed release's name and manifest.

// ConditionType is a type of operator-sdk's conditions.
type ConditionType string

// Reason is a reason of operator-sdk's conditions.
type Reason string

// Its condition types and the reasons of a successful release.
const (
	ConditionInitialized    ConditionType = "Initialized"
	ConditionDeployed       ConditionType = "Deployed"
	ConditionReleaseFailed  ConditionType = "ReleaseFailed"
	ConditionIrreconcilable ConditionType = "Irreconcilable"

	ReasonInstallSuccessful Reason = "InstallSuccessful"
	ReasonUpgradeSuccessful Reason = "UpgradeSuccessful"
)

// Condition is one of its conditions.
type Condition struct {
	Type               ConditionType `json:"type"`
	Status             string        `json:"status"`
	Reason             Reason        `json:"reason,omitempty"`
	Message            string        `json:"message,omitempty"`
	LastTransitionTime metav1.Time   `json:"lastTransitionTime,omitempty"`
}

// DeployedRelease is status.deployedRelease.
type DeployedRelease struct {
	Name     string `json:"name,omitempty"`
	Manifest string `json:"manifest,omitempty"`
}

// Status is the whole status it writes.
type Status struct {
	Conditions      []Condition      `json:"conditions"`
	DeployedRelease *DeployedRelease `json:"deployedRelease,omitempty"`
}

// StatusOf reads a custom resource's status as operator-sdk does (an
// unreadable one reads as empty).
func StatusOf(u *unstructured.Unstructured) *Status {
	st := &Status{}
	if m, ok := u.Object["status"].(map[string]any); ok {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, st); err != nil {
			return &Status{}
		}
	}
	return st
}

// set sets a condition, keeping its transition time unless its status
// changes.
func (s *Status) set(c Condition, now metav1.Time) {
	for i := range s.Conditions {
		if s.Conditions[i].Type == c.Type {
			c.LastTransitionTime = s.Conditions[i].LastTransitionTime
			if s.Conditions[i].Status != c.Status {
				c.LastTransitionTime = now
			}
			s.Conditions[i] = c
			return
		}
	}
	c.LastTransitionTime = now
	s.Conditions = append(s.Conditions, c)
}

// remove removes a condition type.
func (s *Status) remove(t ConditionType) {
	for i := range s.Conditions {
		if s.Conditions[i].Type == t {
			s.Conditions = append(s.Conditions[:i], s.Conditions[i+1:]...)
			return
		}
	}
}

// Condition returns the condition of type t, or nil.
func (s *Status) Condition(t ConditionType) *Condition {
	for i := range s.Conditions {
		if s.Conditions[i].Type == t {
			return &s.Conditions[i]
		}
	}
	return nil
}

// toMap is the status as the unstructured object holds it.
func toMap(s *Status) (map[string]any, error) {
	return runtime.DefaultUnstructuredConverter.ToUnstructured(s)
}
