// Package images finds and relocates the container images of rendered
// Kubernetes objects: every Pod template (Pods, workload controllers,
// Jobs, CronJobs) and its containers, init containers and ephemeral
// containers. `chartkeeper images` lists them; the release engine's
// post-renderer rewrites them to a private mirror registry and adds
// imagePullSecrets, so that an air-gapped cluster pulls nothing from the
// internet.
package images
