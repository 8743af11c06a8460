// Package trace is `doctor trace`: the runner-gateway-cluster guide's
// "Verify" step 3 as a command. It follows one job pod of a Kubernetes
// runner through the ten stages of a job on a cluster that rests at zero
// nodes, prints each stage as it happens with the time since the one
// before, and, when a stage takes longer than its budget, runs the checks
// that explain that stage (through OnStuck) and prints what they find in
// place.
//
// It only lists and watches: the runner namespace's pods and events and the
// cluster's nodes, through the client-go watch API (list, then watch from
// the list's resourceVersion with bookmarks; a watch that ends is re-made
// from the last resourceVersion, 410 Gone relists, failures back off from
// 0.5s to 30s, and every goroutine ends with Run).
//
// # The job pod
//
// With Options.Pod the trace follows that pod. With Options.Next it follows
// the first job pod that appears after its first list: a pod labelled
// job.runner.gitlab.com/pod or project.runner.gitlab.com/id, or whose "pod"
// label or name is the executor's runner-<token>-project-<id>-concurrent-<n>
// (gitlab-runner v19.2.1 executors/kubernetes/kubernetes.go buildLabels,
// common/build.go ProjectUniqueName), and not a pause pod
// (runner.gitlab.com/pause-pod, executors/kubernetes/autoscaler/
// pause_pod_manager.go). With RunnerName, a pod whose
// manager.runner.gitlab.com/name is another runner's is not followed.
//
// An event is the followed pod's when it names the pod's UID, or, naming
// none, when it is from the pod's lifetime: an earlier pod of the same name
// never speaks for it. With Next the namespace's past events are not read
// (a list of one, for the resourceVersion to watch from); with Pod the
// newest 512 about it are kept; a relist is taken a page of 100 at a time.
//
// # Stages, and what proves each
//
//  1. created: the pod is seen; N, the cluster's nodes, are those that
//     existed before it.
//  2. scale-decision: an event about the pod from the scale decision (see
//     ScaleDecision): TriggeredScaleUp or NotTriggerScaleUp
//     (cluster-autoscaler), Nominated or karpenter's FailedScheduling, or a
//     reason that begins with Provision (the guide's provider). The
//     default scheduler's FailedScheduling does not count.
//  3. node-joined: a node created after the pod.
//  4. node-ready: that node's Ready condition is True.
//  5. scheduled: spec.nodeName is set (the scheduler's binding).
//  6. images-pulled: every container, init ones included, has its image: a
//     kubelet Pulled event names it (spec.containers{NAME}), or its status
//     has an imageID, runs or ran, or waits for a reason that comes after
//     the pull (not ContainerCreating, PodInitializing, ErrImagePull,
//     ImagePullBackOff, InvalidImageName, ...).
//  7. running: phase Running and the build container ready, the runner's own
//     test before it attaches (util.go isRunning, waitForPodRunning).
//  8. finished: phase Succeeded or Failed, the build container terminated,
//     or the pod being deleted while it runs (the runner deletes the pod
//     when the job ends: kubernetes.go cleanupResources).
//  9. pod-deleted: the pod is gone.
//  10. scaled-down: the cluster is back at N nodes, and no node that joined
//     after the pod remains (zero on the guide's cluster).
//
// Watch streams are not ordered with one another and a change can fall
// between two observations, so a stage proved by a later one is printed as
// inferred; stages 2 to 4 are skipped when the pod is placed on a node that
// existed before it. A pod deleted, or failed, before it ever ran ends the
// trace at once, stuck in the stage it waited for (the runner gave up at
// poll_timeout, or the job was cancelled).
//
// # Budgets
//
// A stage's budget counts from the moment the stage before it was reached
// (DefaultBudget): scale-decision and scheduled poll_timeout/6 within
// [30s, 2m]; node-ready twice the median boot (creation to Ready) of the
// nodes this trace saw, at least 30s; pod-deleted 2m; scaled-down 20m
// (cluster-autoscaler's scale-down-delay-after-add and
// scale-down-unneeded-time are 10m each). Stages 2 to 7 also share
// poll_timeout from the pod's creation: the runner's waitForPodRunning
// gives up then ("timed out waiting for pod to start"). Options.Budgets
// replaces a stage's budget, 0 turns it off.
//
// # Output and verdict
//
// On a terminal the output is a live view; elsewhere JSON lines (see
// Output). The Verdict is Completed, exit 0, or stuck in a stage, exit 2:
// at Options.Timeout, when ctx ends (Ctrl-C), or when the pod goes before
// it ran. Its Timeline is every stage reached.
package trace
