package chaos

import (
	"context"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// Helm release statuses the harness looks for (Helm's release.Status values).
const (
	statusDeployed        = "deployed"
	statusPendingInstall  = "pending-install"
	statusPendingUpgrade  = "pending-upgrade"
	statusPendingRollback = "pending-rollback"
	statusUninstalling    = "uninstalling"
	// statusNone: the release has no revision stored.
	statusNone = "none"
)

// pending reports whether a release status is one Helm leaves while an
// operation runs.
func pending(status string) bool {
	switch status {
	case statusPendingInstall, statusPendingUpgrade, statusPendingRollback, statusUninstalling:
		return true
	}
	return false
}

// history is what the release Secrets of one release say.
type history struct {
	// Revisions is the number of stored revisions.
	Revisions int
	// Latest is the newest revision's number and status ("" if none).
	Latest       int
	LatestStatus string
}

// releaseHistory reads the release Secrets of the release named after key.
func releaseHistory(ctx context.Context, cs kubernetes.Interface, key types.NamespacedName) (history, error) {
	list, err := cs.CoreV1().Secrets(key.Namespace).List(ctx, metav1.ListOptions{LabelSelector: "owner=helm,name=" + key.Name})
	if err != nil {
		return history{}, err
	}
	return historyOf(list.Items), nil
}

func historyOf(secrets []corev1.Secret) history {
	var h history
	for _, s := range secrets {
		h.Revisions++
		v, _ := strconv.Atoi(s.Labels["version"])
		if v > h.Latest {
			h.Latest, h.LatestStatus = v, s.Labels["status"]
		}
	}
	return h
}
