// Package kubelet is what proves the apiserver reaches each node's kubelet:
// one-byte reads of a running pod's log, which the apiserver can serve only
// through that node's kubelet. KubeSystemRunningPodsFact lists the pods to
// read, KubeSystemLogReadsFact sends the reads as soon as that list is in,
// and RememberedReadsFact sends the reads of the pods the last run read
// (remembered under --cache-dir) with the run's first requests. Every read
// is shared per target (ReadShared), so kubelet-reach, which samples the
// nodes and judges the reads (Classify), finds them done.
package kubelet
