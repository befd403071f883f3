package readiness

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// MaxPodReason bounds what PodReason returns, in bytes: a scheduler's
// message names every node's objection and can run to kilobytes.
const MaxPodReason = 300

// podWorkloads are the kinds whose readiness waits for Pods: when one is
// not ready, its Pods say why (PodReason).
var podWorkloads = map[schema.GroupKind]bool{
	{Group: "apps", Kind: "Deployment"}:  true,
	{Group: "apps", Kind: "StatefulSet"}: true,
	{Group: "apps", Kind: "DaemonSet"}:   true,
	{Group: "apps", Kind: "ReplicaSet"}:  true,
	{Group: "batch", Kind: "Job"}:        true,
	{Kind: "Pod"}:                        true,
}

// RunsPods reports whether objects of this kind are ready only when Pods
// are: the kinds whose Pods PodReason reads.
func RunsPods(gk schema.GroupKind) bool { return podWorkloads[gk] }

// transientWaiting are container waiting reasons of a Pod on its way up:
// they block nothing (a Pod still pulling its image or creating its
// containers says so with these, and then runs).
var transientWaiting = map[string]bool{"ContainerCreating": true, "PodInitializing": true}

// PodReason returns the first reason that keeps one of pods from running,
// in one line of at most MaxPodReason bytes ("" when none says why):
// PodScheduled False with the scheduler's message, a PersistentVolumeClaim
// of the Pod that is not bound, a container's waiting reason with its
// message (ImagePullBackOff, ErrImagePull, CrashLoopBackOff with the last
// exit, CreateContainerConfigError, ...), or a Pod that failed. Pods are
// looked at in name order, Pods being deleted and Pods that succeeded
// left out; claims are the claims of those Pods that could be read (a
// claim not among them is not judged). redact (nil: none) hides secret
// values from the reason before it is cut, so that no cut leaves the
// start of a secret that redact would no longer recognise.
func PodReason(pods []corev1.Pod, claims []corev1.PersistentVolumeClaim, redact func(string) string) string {
	sorted := slices.Clone(pods)
	slices.SortFunc(sorted, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	for i := range sorted {
		why := podReason(&sorted[i], claims)
		if why == "" {
			continue
		}
		if redact != nil {
			why = redact(why)
		}
		return cut(oneLine(why), MaxPodReason)
	}
	return ""
}

// podReason is what keeps one Pod from running ("" when nothing does).
func podReason(p *corev1.Pod, claims []corev1.PersistentVolumeClaim) string {
	if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded {
		return ""
	}
	name := "Pod " + p.Name
	if p.Status.Phase == corev1.PodFailed {
		return join(name+": Failed", p.Status.Reason, p.Status.Message)
	}
	unbound := unboundClaim(p, claims)
	if c := podCondition(p, corev1.PodScheduled); c != nil && c.Status == corev1.ConditionFalse {
		why := join(name+": PodScheduled=False", c.Reason, c.Message)
		if unbound != "" {
			why += " (" + unbound + ")"
		}
		return why
	}
	if unbound != "" && p.Spec.NodeName == "" {
		return name + ": " + unbound
	}
	if why := waitingReason(p.Status.InitContainerStatuses, "init container"); why != "" {
		return name + ": " + why
	}
	if why := waitingReason(p.Status.ContainerStatuses, "container"); why != "" {
		return name + ": " + why
	}
	return ""
}

// unboundClaim names the first claim of the Pod's volumes that is known
// and not bound ("" when none).
func unboundClaim(p *corev1.Pod, claims []corev1.PersistentVolumeClaim) string {
	for _, v := range p.Spec.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		for _, c := range claims {
			if c.Name != v.PersistentVolumeClaim.ClaimName || c.Namespace != p.Namespace {
				continue
			}
			if c.Status.Phase != corev1.ClaimBound {
				phase := string(c.Status.Phase)
				if phase == "" {
					phase = string(corev1.ClaimPending)
				}
				return fmt.Sprintf("PersistentVolumeClaim %s is %s, not bound", c.Name, phase)
			}
		}
	}
	return ""
}

// waitingReason is the first container of statuses that waits for a
// reason other than starting up ("" when none), with its message; a
// container in CrashLoopBackOff also says how it last ended.
func waitingReason(statuses []corev1.ContainerStatus, what string) string {
	for _, s := range statuses {
		w := s.State.Waiting
		if w == nil || w.Reason == "" || transientWaiting[w.Reason] {
			continue
		}
		why := join(fmt.Sprintf("%s %s", what, s.Name), w.Reason, w.Message)
		if t := s.LastTerminationState.Terminated; t != nil && w.Reason == "CrashLoopBackOff" {
			why += fmt.Sprintf(" (last exit code %d", t.ExitCode)
			if t.Reason != "" {
				why += ", " + t.Reason
			}
			why += ")"
		}
		return why
	}
	return ""
}

func podCondition(p *corev1.Pod, typ corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == typ {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// join writes "head: reason: message", leaving out what is empty.
func join(head string, parts ...string) string {
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			head += ": " + p
		}
	}
	return head
}

// oneLine folds line breaks and runs of spaces (a scheduler's message
// may hold several lines) into single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// cut returns s if it fits in limit bytes, else its start cut at a rune
// boundary and ended with "…", limit bytes in all.
func cut(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	const tail = "…"
	n := max(limit-len(tail), 0)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + tail
}
