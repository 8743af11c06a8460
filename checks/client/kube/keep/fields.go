// Package keep is what doctor keeps of the API answers it reads: for each
// kind, the fields some check or fact reads, and nothing else. Every answer
// is cut down to them where it arrives (the transport of kubefacts.NewAPI),
// before client-go decodes it, for a live run (protobuf), a recorded one
// (JSON, which the bundle's tape then holds) and a replayed one alike: the
// checks see the same objects in all three, and what they never read (env
// values, args, annotations, Secret data, managedFields) is never decoded,
// held or written anywhere.
//
// The cut is also where the work of an answer is bounded: items per list
// (no more than the limit asked), elements per repeated field, and the
// memory the run's decoded objects take (bounds.go).
//
// Kinds is the one declaration of what doctor reads of the API: anything
// that decodes less than client-go's types (small types of their own, a
// direct protobuf decoding) is to derive from it, not restate it.
package keep

import (
	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	certsv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	schedv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Kind is one kind doctor reads and the fields it keeps of it: JSON paths
// from the object's root, "[]" after a list field, "{keys}" after a map of
// which only the keys are read, "{}" after a struct of which only the
// presence is read. A path ends at a value (a string, a number, a time, a
// quantity, a map of them); naming a struct whole is refused, so a field
// is kept only where a check reads it.
type Kind struct {
	APIVersion, Kind string
	// Go is a value of the kind's Go type, whose json and protobuf tags
	// say where each path is on the wire; nil for a kind doctor reads as
	// unstructured JSON (a CRD), whose leaves are kept whole.
	Go any
	// List is a value of the Go type of the kind's list, when doctor lists
	// it ("" APIVersion/Kind+"List" for a schemaless kind).
	List   any
	Listed bool // a schemaless kind that is listed
	Fields []string
	// Transforms replace a kept string by what a check reads of it.
	Transforms map[string]func(string) string
	// Values say, of a map of strings (labels), which keys' values are
	// kept; the other keys are kept with an empty value.
	Values map[string]func(key string) bool
}

// listMeta is what a list keeps of its own metadata: the continue token
// (every paginated list, cluster.pages and trace's listAll) and the
// resourceVersion a trace starts its watch from.
var listMeta = []string{
	"metadata.continue",        // cluster.pages, nodedns.pages, trace listAll: the next page
	"metadata.resourceVersion", // trace listAll: where the watch starts
}

// Kinds are the kinds doctor reads. Each field names, beside it, what
// reads it; TestEveryReadFieldIsKept (audit_test.go) holds this list to
// the code: every field of an API type that checks/ or internal/ reads is
// here, or is one doctor only writes (a pod it builds).
var Kinds = []Kind{
	{APIVersion: "v1", Kind: "Pod", Go: corev1.Pod{}, List: corev1.PodList{}, Fields: []string{
		"metadata.name",                            // every pod check's evidence; trace
		"metadata.namespace",                       // cluster.join, kubelet-reach, evidence
		"metadata.uid",                             // namespace-quota (owners of leaked objects); trace (the pod followed)
		"metadata.resourceVersion",                 // trace: the watch resumes from it
		"metadata.creationTimestamp",               // pending-no-node, job-terminations, trace
		"metadata.deletionTimestamp",               // kubelet-reach (readable), node-local-dns, trace
		"metadata.labels",                          // cluster.IsJobPod, node-local-dns, kubelet-reach, trace (manager, pause)
		"spec.nodeName",                            // pending-*, scale-to-zero, kubelet-reach, node-local-dns, node-arch, trace
		"spec.priority",                            // scale-to-zero (the job pods' priority)
		"spec.containers[].name",                   // kubelet-reach (container to read), job-terminations, trace
		"spec.containers[].resources.requests",     // pending-unschedulable (cluster.Requests)
		"spec.containers[].resources.limits",       // job-terminations (limitOf, jobpod.Sum)
		"spec.initContainers[].name",               // job-terminations, trace
		"spec.initContainers[].resources.requests", // pending-unschedulable
		"spec.initContainers[].resources.limits",   // job-terminations
		"spec.resources.requests",                  // job-terminations (jobpod.Sum of a live pod)
		"spec.resources.limits",                    // job-terminations (jobpod.Sum of a live pod)
		"spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[].matchFields[].key",      // node-local-dns podNode
		"spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[].matchFields[].operator", // node-local-dns podNode
		"spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[].matchFields[].values[]", // node-local-dns podNode
		"status.phase",                                                   // most pod checks; trace
		"status.reason",                                                  // job-terminations (Evicted), --deep probe, trace
		"status.message",                                                 // job-terminations, --deep probe, trace
		"status.conditions[].type",                                       // job-terminations (DisruptionTarget), node-local-dns (Ready), trace
		"status.conditions[].status",                                     // same
		"status.conditions[].reason",                                     // job-terminations
		"status.conditions[].message",                                    // job-terminations
		"status.conditions[].lastTransitionTime",                         // job-terminations, trace
		"status.containerStatuses[].name",                                // image-pull, job-terminations, kubelet-reach, node-arch, node-local-dns, trace
		"status.containerStatuses[].image",                               // image-pull, node-arch
		"status.containerStatuses[].imageID",                             // trace (image pulled)
		"status.containerStatuses[].ready",                               // node-local-dns, trace
		"status.containerStatuses[].restartCount",                        // node-local-dns
		"status.containerStatuses[].state.waiting.reason",                // image-pull, node-local-dns, --deep probe, trace
		"status.containerStatuses[].state.waiting.message",               // image-pull, node-local-dns, trace
		"status.containerStatuses[].state.running.startedAt",             // kubelet-reach (a running container), trace
		"status.containerStatuses[].state.terminated.exitCode",           // job-terminations, node-local-dns, --deep probe, trace
		"status.containerStatuses[].state.terminated.reason",             // job-terminations, node-local-dns, --deep probe
		"status.containerStatuses[].state.terminated.message",            // node-arch (exec format error)
		"status.containerStatuses[].state.terminated.startedAt",          // trace (ran)
		"status.containerStatuses[].state.terminated.finishedAt",         // job-terminations
		"status.containerStatuses[].lastState.terminated.exitCode",       // job-terminations; trace (ran: that it is there)
		"status.containerStatuses[].lastState.terminated.reason",         // job-terminations
		"status.containerStatuses[].lastState.terminated.message",        // node-arch
		"status.containerStatuses[].lastState.terminated.finishedAt",     // job-terminations
		"status.initContainerStatuses[].name",                            // as containerStatuses
		"status.initContainerStatuses[].image",                           // image-pull, node-arch
		"status.initContainerStatuses[].imageID",                         // trace
		"status.initContainerStatuses[].ready",                           // trace
		"status.initContainerStatuses[].state.waiting.reason",            // image-pull, trace
		"status.initContainerStatuses[].state.waiting.message",           // image-pull, trace
		"status.initContainerStatuses[].state.running.startedAt",         // trace
		"status.initContainerStatuses[].state.terminated.exitCode",       // job-terminations, trace
		"status.initContainerStatuses[].state.terminated.reason",         // job-terminations
		"status.initContainerStatuses[].state.terminated.message",        // node-arch
		"status.initContainerStatuses[].state.terminated.startedAt",      // trace
		"status.initContainerStatuses[].state.terminated.finishedAt",     // job-terminations
		"status.initContainerStatuses[].lastState.terminated.exitCode",   // job-terminations, node-arch, trace
		"status.initContainerStatuses[].lastState.terminated.reason",     // job-terminations
		"status.initContainerStatuses[].lastState.terminated.message",    // node-arch
		"status.initContainerStatuses[].lastState.terminated.finishedAt", // job-terminations
	}, Values: map[string]func(string) bool{"metadata.labels": LabelValueRead}, Transforms: podSaid},
	{APIVersion: "v1", Kind: "Node", Go: corev1.Node{}, List: corev1.NodeList{}, Fields: []string{
		"metadata.name",                               // every node check; trace
		"metadata.resourceVersion",                    // trace: the watch resumes from it
		"metadata.creationTimestamp",                  // scale-to-zero, kubelet-reach (Sample), trace
		"metadata.labels",                             // node-arch, helper-image (node_selector, kubernetes.io/arch), node-local-dns
		"metadata.annotations{keys}",                  // kubelet-serving (a k3s.io/ annotation names a k3s node); values never
		"spec.providerID",                             // kubelet-serving (k3s://)
		"spec.taints[].key",                           // node-local-dns evidence (Taint.ToString); a taint's value is no check's
		"spec.taints[].effect",                        // same
		"status.conditions[].type",                    // cluster.NodeReady; trace
		"status.conditions[].status",                  // same
		"status.conditions[].reason",                  // trace
		"status.conditions[].message",                 // trace
		"status.conditions[].lastTransitionTime",      // trace (ready since)
		"status.addresses[].type",                     // kubelet-reach (KubeletAddr)
		"status.addresses[].address",                  // kubelet-reach
		"status.allocatable",                          // pending-unschedulable, job-terminations (LargestAllocatable)
		"status.daemonEndpoints.kubeletEndpoint.Port", // kubelet-reach (KubeletAddr)
		"status.nodeInfo.architecture",                // node-arch, helper-image
		"status.nodeInfo.kubeletVersion",              // kubelet-serving (+k3s)
	}, Values: map[string]func(string) bool{"metadata.labels": LabelValueRead}, Transforms: map[string]func(string) string{
		"status.conditions[].reason": Reason, "status.conditions[].message": Message,
	}},
	{APIVersion: "v1", Kind: "Event", Go: corev1.Event{}, List: corev1.EventList{}, Fields: []string{
		"metadata.name",              // job-terminations evidence
		"metadata.namespace",         // job-terminations evidence
		"metadata.resourceVersion",   // trace: the watch resumes from it
		"metadata.creationTimestamp", // job-terminations, trace (the event's time, last resort)
		"involvedObject.kind",        // trace
		"involvedObject.name",        // cluster.join (events by pod), job-terminations, trace
		"involvedObject.namespace",   // cluster.join, trace
		"involvedObject.uid",         // trace
		"involvedObject.fieldPath",   // trace (the container pulled)
		"reason",                     // pending-unschedulable, job-terminations, trace
		"message",                    // pending-unschedulable, job-terminations, trace
		"type",                       // trace (Warning)
		"eventTime",                  // job-terminations, trace
		"lastTimestamp",              // job-terminations, trace
		"firstTimestamp",             // trace
		"reportingComponent",         // trace (who reported a scale-up)
		"source.component",           // trace
	}, Transforms: map[string]func(string) string{"reason": Reason, "message": Message}},
	{APIVersion: "v1", Kind: "Namespace", Go: corev1.Namespace{}, List: corev1.NamespaceList{}, Fields: []string{
		"metadata.name",              // namespace, job-identity (cluster.NamespaceObject)
		"metadata.labels",            // job-identity (Pod Security level)
		"metadata.deletionTimestamp", // namespace (Terminating since)
		"status.phase",               // namespace (Terminating)
	}, Values: map[string]func(string) bool{"metadata.labels": LabelValueRead}},
	// job-identity reads only whether the service account exists: nothing
	// of it is kept.
	{APIVersion: "v1", Kind: "ServiceAccount", Go: corev1.ServiceAccount{}},
	{APIVersion: "v1", Kind: "ResourceQuota", Go: corev1.ResourceQuota{}, List: corev1.ResourceQuotaList{}, Fields: []string{
		"metadata.name",        // namespace-quota
		"metadata.namespace",   // namespace-quota (inNamespace)
		"spec.hard",            // namespace-quota (Hard, before the controller ran)
		"spec.scopes[]",        // namespace-quota (scoped quotas are skipped)
		"spec.scopeSelector{}", // namespace-quota: only whether it is set
		"status.hard",          // namespace-quota
		"status.used",          // namespace-quota
	}},
	{APIVersion: "v1", Kind: "LimitRange", Go: corev1.LimitRange{}, List: corev1.LimitRangeList{}, Fields: []string{
		"metadata.name",                // namespace-quota evidence
		"metadata.namespace",           // namespace-quota
		"spec.limits[].type",           // namespace-quota
		"spec.limits[].default",        // namespace-quota (ApplyDefaults)
		"spec.limits[].defaultRequest", // namespace-quota (ApplyDefaults)
		"spec.limits[].min",            // namespace-quota (bounds)
		"spec.limits[].max",            // namespace-quota (bounds)
	}},
	{APIVersion: "apps/v1", Kind: "DaemonSet", Go: appsv1.DaemonSet{}, List: appsv1.DaemonSetList{}, Fields: []string{
		"metadata.name",                   // node-local-dns
		"spec.template.metadata.labels",   // node-local-dns (the add-on's pod label)
		"spec.template.spec.nodeSelector", // node-local-dns evidence
		"status.desiredNumberScheduled",   // node-local-dns evidence
		"status.numberReady",              // node-local-dns evidence
	}, Values: map[string]func(string) bool{"spec.template.metadata.labels": LabelValueRead, "spec.template.spec.nodeSelector": LabelValueRead}},
	{APIVersion: "scheduling.k8s.io/v1", Kind: "PriorityClass", Go: schedv1.PriorityClass{}, List: schedv1.PriorityClassList{}, Fields: []string{
		"metadata.name", // scale-to-zero (the pause pods' class)
		"value",         // scale-to-zero
		"globalDefault", // scale-to-zero
	}},
	{APIVersion: "certificates.k8s.io/v1", Kind: "CertificateSigningRequest", Go: certsv1.CertificateSigningRequest{}, List: certsv1.CertificateSigningRequestList{}, Fields: []string{
		"metadata.name",               // kubelet-serving
		"metadata.creationTimestamp",  // kubelet-serving (newest per node, age)
		"spec.signerName",             // kubelet-serving
		"spec.username",               // kubelet-serving (NodeOf)
		"spec.request",                // kubelet-serving (NodeOf: the subject of the request, a public CSR)
		"status.conditions[].type",    // kubelet-serving (stateOf)
		"status.conditions[].status",  // kubelet-serving
		"status.conditions[].message", // kubelet-serving
		"status.certificate",          // kubelet-serving: whether it was issued (a public certificate)
	}, Transforms: map[string]func(string) string{"status.conditions[].message": Message}},
	{APIVersion: "authentication.k8s.io/v1", Kind: "SelfSubjectReview", Go: authnv1.SelfSubjectReview{}, Fields: []string{
		"status.userInfo.username", // kubefacts.IdentityFact: api-auth, owner-rbac
		"status.userInfo.groups[]", // kubefacts.IdentityFact: owner-rbac
	}},
	{APIVersion: "authorization.k8s.io/v1", Kind: "SelfSubjectAccessReview", Go: authzv1.SelfSubjectAccessReview{}, Fields: []string{
		"status.allowed", // kubefacts.Allowed: runner-rbac, owner-rbac, dvp-rbac
	}},
	{APIVersion: "authorization.k8s.io/v1", Kind: "SelfSubjectRulesReview", Go: authzv1.SelfSubjectRulesReview{}, Fields: []string{
		"status.incomplete",                  // kubefacts.Allowed
		"status.resourceRules[].verbs[]",     // kubefacts.Allowed (permits)
		"status.resourceRules[].apiGroups[]", // same
		"status.resourceRules[].resources[]", // same
	}},
	{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadata", Go: metav1.PartialObjectMetadata{}, List: metav1.PartialObjectMetadataList{}, Fields: []string{
		"metadata.name",                   // namespace-quota (leaked Secrets and ConfigMaps), job-identity (a pull secret exists)
		"metadata.creationTimestamp",      // namespace-quota (IsLeaked)
		"metadata.ownerReferences[].kind", // namespace-quota (IsLeaked)
		"metadata.ownerReferences[].uid",  // namespace-quota (IsLeaked)
	}},
	// job-admission names the webhooks a refused job pod met
	// (cluster.ReadWebhooks): never a caBundle.
	{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingWebhookConfiguration", Go: admissionv1.ValidatingWebhookConfiguration{},
		List: admissionv1.ValidatingWebhookConfigurationList{}, Fields: webhookFields},
	{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingWebhookConfiguration", Go: admissionv1.MutatingWebhookConfiguration{},
		List: admissionv1.MutatingWebhookConfigurationList{}, Fields: webhookFields},
	{APIVersion: "v1", Kind: "Status", Go: metav1.Status{}, Fields: []string{
		"status",                    // client-go: a Failure Status is an error
		"message",                   // every error's text (apierrors.StatusError)
		"reason",                    // apierrors.IsNotFound, IsForbidden, IsResourceExpired, ...
		"code",                      // apierrors, trace (410)
		"details.name",              // apierrors (the object named)
		"details.group",             // apierrors
		"details.kind",              // apierrors
		"details.retryAfterSeconds", // client-go's retry after 429 and 5xx
	}},
	// The fleeting-plugin-dvp pool's objects, read as unstructured JSON
	// (dvp-pool); the Deckhouse virtualization CRDs have no Go types here.
	{APIVersion: dvpAPIVersion, Kind: "VirtualMachinePool", Fields: []string{
		"metadata.name",        // dvp-pool
		"metadata.uid",         // dvp-pool (the VMs the pool controls)
		"spec.scaleDownPolicy", // dvp-pool
		"spec.replicas",        // dvp-pool
		"spec.virtualMachineTemplate.spec.provisioning.type",             // dvp-pool (cloud-init)
		"spec.virtualMachineTemplate.spec.provisioning.userData",         // dvp-pool: only its users (see Transforms)
		"spec.virtualMachineTemplate.spec.provisioning.userDataRef.name", // dvp-pool evidence
		"spec.virtualDiskTemplates[].name",                               // dvp-pool
		"spec.virtualDiskTemplates[].spec.persistentVolumeClaim.size",    // dvp-pool
		"spec.virtualDiskTemplates[].spec.dataSource.objectRef.kind",     // dvp-pool (the disk's image)
		"spec.virtualDiskTemplates[].spec.dataSource.objectRef.name",     // dvp-pool
	}, Transforms: map[string]func(string) string{
		"spec.virtualMachineTemplate.spec.provisioning.userData": CloudConfigUsers,
	}},
	{APIVersion: dvpAPIVersion, Kind: "VirtualMachine", Listed: true, Fields: []string{
		"apiVersion", "kind", // unstructured items carry their own
		"metadata.name",                              // dvp-pool evidence
		"metadata.uid",                               // dvp-pool
		"metadata.creationTimestamp",                 // dvp-pool (phaseSince)
		"metadata.deletionTimestamp",                 // dvp-pool
		"metadata.ownerReferences[].uid",             // dvp-pool (metav1.GetControllerOf)
		"metadata.ownerReferences[].controller",      // dvp-pool
		"metadata.ownerReferences[].apiVersion",      // metav1.GetControllerOf copies the reference
		"metadata.ownerReferences[].kind",            // same
		"metadata.ownerReferences[].name",            // same
		"status.phase",                               // dvp-pool
		"status.stats.phasesTransitions[].timestamp", // dvp-pool (phaseSince)
		"status.conditions[].type",                   // dvp-pool (falseConditions)
		"status.conditions[].status",                 // dvp-pool
		"status.conditions[].reason",                 // dvp-pool
		"status.conditions[].message",                // dvp-pool
	}, Transforms: map[string]func(string) string{"status.conditions[].reason": Reason, "status.conditions[].message": Message}},
	// dvp-pool reads only whether the pool's images exist.
	{APIVersion: dvpAPIVersion, Kind: "VirtualImage"},
	{APIVersion: dvpAPIVersion, Kind: "ClusterVirtualImage"},
}

// podSaid are what a pod keeps of its free text (said.go): reasons as
// words, messages as the documented spans of them, a terminated
// container's message (its log tail, under FallbackToLogsOnError) as
// whether it says exec format error.
var podSaid = func() map[string]func(string) string {
	m := map[string]func(string) string{
		"status.reason": Reason, "status.message": Message,
		"status.conditions[].reason": Reason, "status.conditions[].message": Message,
	}
	for _, cs := range []string{"status.containerStatuses[].", "status.initContainerStatuses[]."} {
		m[cs+"state.waiting.reason"], m[cs+"state.waiting.message"] = Reason, Message
		m[cs+"state.terminated.reason"], m[cs+"state.terminated.message"] = Reason, Terminated
		m[cs+"lastState.terminated.reason"], m[cs+"lastState.terminated.message"] = Reason, Terminated
	}
	return m
}()

// dvpAPIVersion is the group and version of the Deckhouse virtualization
// objects (kubefacts.DVPGroup, kubefacts.DVPVersion).
const dvpAPIVersion = "virtualization.deckhouse.io/v1alpha2"

// webhookFields are what job-admission reads of a webhook configuration,
// validating or mutating alike (cluster.webhookOf, Webhook.matches).
var webhookFields = []string{
	"metadata.name",                             // evidence: the configuration
	"webhooks[].name",                           // the refusal names it
	"webhooks[].clientConfig.url",               // evidence: the endpoint
	"webhooks[].clientConfig.service.namespace", // same
	"webhooks[].clientConfig.service.name",      // same
	"webhooks[].clientConfig.service.path",      // same
	"webhooks[].clientConfig.service.port",      // same
	"webhooks[].failurePolicy",                  // evidence
	"webhooks[].sideEffects",                    // evidence: why a dry run is refused
	"webhooks[].timeoutSeconds",                 // evidence
	"webhooks[].matchConditions[].name",         // counted: conditions doctor does not evaluate
	"webhooks[].namespaceSelector.matchLabels",  // whether the runner's namespace is selected
	"webhooks[].namespaceSelector.matchExpressions[].key",
	"webhooks[].namespaceSelector.matchExpressions[].operator",
	"webhooks[].namespaceSelector.matchExpressions[].values[]",
	"webhooks[].objectSelector.matchLabels", // whether the job pod is selected
	"webhooks[].objectSelector.matchExpressions[].key",
	"webhooks[].objectSelector.matchExpressions[].operator",
	"webhooks[].objectSelector.matchExpressions[].values[]",
}
