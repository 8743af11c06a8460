package symptom_test

import (
	"os"
	"slices"
	"testing"

	"github.com/socialwebcomputer/doctor/checks/all"
	"github.com/socialwebcomputer/doctor/internal/app/symptom"
)

// captured are symptom lines as the runner, client-go or the runner's docs
// print them, for every check of the catalog: each of a check's patterns
// must match one of its lines. A check registered without lines here fails
// the test, so every new check brings the lines its patterns are for.
var captured = map[string][]string{
	"runner-process": {
		// docs/configuration/autoscale.md, v19.3.0.
		"FATAL: Service run failed   error=toml: cannot load TOML value of type int64 into a Go float",
		// commands/multi.go checkConfig, v19.3.0 (docs/runner-source-notes.md §2).
		"ERROR: Failed to load config stat /etc/gitlab-runner/config.toml: no such file or directory  builds=0 max_builds=1",
	},
	"runner-service": {
		// common/build.go setTraceStatus + executors/kubernetes/kubernetes.go Prepare, v19.3.0 (notes §1).
		"\x1b[31;1mERROR: Job failed: getting Kubernetes config: invalid configuration: no configuration has been provided, try setting KUBERNETES_MASTER environment variable\x1b[0;m",
	},
	"config-decode": {
		// commands/multi.go Execute + common/config.go LoadConfig, v19.3.0 (notes §3).
		`FATAL: Service run failed                           error=decoding configuration file: toml: line 1 (last key "concurrent"): incompatible types: TOML value has type string; destination has type integer`,
		// common/config.go, v19.3.0, with the runner's own error (runnerconfig/refusals_test.go).
		"FATAL: Service run failed                           error=loading configuration for dm runner: compiling docker machine autoscaling periods: invalid time periods [* * 25 * * * *], caused by: syntax error in hour field: '25'",
		// common/config.go, v19.2.2: the same error, misspelt.
		"FATAL: Service run failed                           error=loading coniguration for dm runner: compiling docker machine autoscaling periods: invalid time periods [* * 25 * * * *], caused by: syntax error in hour field: '25'",
		"FATAL: Service run failed                           error=invalid config: validating global labels: invalid label value, doesn't match ^[a-z]: platform/ci",
		// docs/configuration/autoscale.md, v19.3.0.
		"FATAL: Service run failed   error=toml: cannot load TOML value of type int64 into a Go float",
		// commands/multi.go, v19.3.0 (notes §2).
		"ERROR: Failed to load config stat /etc/gitlab-runner/config.toml: no such file or directory  builds=0 max_builds=1",
	},
	"config-unknown-keys": {
		// commands/lint.go, v19.3.0.
		"2 unknown key(s) found in /etc/gitlab-runner/config.toml:",
		"  unknown key: runners.run_untagged",
		// commands/register.go, v19.3.0 (notes §4).
		"FATAL: Runner configuration other than name and executor configuration is reserved (specifically --locked, --access-level, --run-untagged, --maximum-timeout, --paused, --tag-list, and --maintenance-note) and cannot be specified when registering with a runner authentication token.",
		"WARNING: You have specified an authentication token in the legacy parameter --registration-token. This has triggered the 'legacy-compatible registration process' which has resulted in the following command line parameters being ignored: --locked, --access-level, --run-untagged, --maximum-timeout, --paused, --tag-list, and --maintenance-note.",
	},
	"runner-kubeconfig-env": {
		"ERROR: Job failed: getting Kubernetes config: invalid configuration: no configuration has been provided, try setting KUBERNETES_MASTER environment variable",
	},
	"kubeconfig-file": {
		"ERROR: Job failed: getting Kubernetes config: invalid configuration: no configuration has been provided, try setting KUBERNETES_MASTER environment variable",
		// client-go tools/clientcmd/loader.go, v0.36.3, behind Prepare's "getting Kubernetes config: %w".
		`ERROR: Job failed: getting Kubernetes config: error loading config file "/etc/gitlab-runner/tenant-ci/kubeconfig.yaml": open /etc/gitlab-runner/tenant-ci/kubeconfig.yaml: permission denied`,
	},
	"cluster-override": {
		// executors/kubernetes/util.go, v19.3.0, behind Prepare's "getting Kubernetes config: %w".
		"ERROR: Job failed: getting Kubernetes config: ca file, cert file and key file must be specified when using file based auth",
	},
	"cert-expiry": {
		// k8s.io/apimachinery errors.go, v0.37.2 ("%s (%s %s)"), behind "setting up credentials: %w".
		"ERROR: Job failed (system failure): prepare environment: setting up credentials: the server has asked for the client to provide credentials (post secrets). Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information",
	},
	"config-lint": {
		// docs/executors/kubernetes/troubleshooting.md, v19.3.0.
		"Job failed (system failure): timed out waiting for pod to start",
		// helpers/trace/buffer.go, v19.3.0.
		"Job's log exceeded limit of 4194304 bytes.",
		// commands/multi.go checkConfigConcurrency, v19.3.0: the warning's lines for concurrent = 1
		// and two runners with limit = 1 and request_concurrency = 1.
		"WARNING: CONFIGURATION: Long polling issues detected.",
		"  - Worker starvation bottleneck: 'concurrent' setting (1) is less than number of runners (2)",
		"  - Build limit bottleneck: 2 runners have low 'limit' settings (≤2) with request_concurrency=1",
		// commands/multi.go updateWorkers, v19.3.0: fmt.Printf's sentence (no newline), then Fatalln of its result.
		"Current configuration 'concurrent = 0' means that no jobs will be processed, see https://docs.gitlab.com/runner/configuration/advanced-configuration.html#the-global-sectionFATAL: 178 <nil>                                     builds=0 max_builds=0",
		// commands/register.go, v19.3.0 (logrus.Warningf).
		"WARNING: The specified runner request concurrency (4) is larger than the current global concurrent limit (2). The global concurrent limit will not be increased and takes precedence.",
	},
	"gitlab-reachability": {
		// network/gitlab.go RequestJob / VerifyRunner, v19.3.0.
		`WARNING: Checking for jobs... failed                runner=Zx8y1Abc status=execute JSON request: execute request: couldn't execute POST against https://gitlab.example.invalid/api/v4/jobs/request: Post "https://gitlab.example.invalid/api/v4/jobs/request": dial tcp: lookup gitlab.example.invalid: no such host`,
		"ERROR: Verifying runner... failed                   runner=Zx8y1Abc status=execute JSON request: execute request: couldn't execute POST against https://gitlab.example.invalid/api/v4/runners/verify",
		// network/gitlab.go getClient / doMeasuredJSON, v19.3.0: no client for the url.
		"ERROR: Checking for jobs... client error             runner=Zx8y1Abc status=get client: only http or https scheme supported",
		// commands/health_helper.go, v19.3.0.
		`ERROR: Runner "https://gitlab.example.invalidZx8y1Abc" is unhealthy and will be disabled for 1h0m0s seconds!  unhealthy_requests=3 unhealthy_requests_limit=3`,
		// docs/configuration/tls-self-signed.md, v19.3.0.
		"Post https://hostname.tld/api/v4/jobs/request: x509: certificate signed by unknown authority",
		"fatal: unable to access 'https://gitlab.example.com/group/project.git/': SSL certificate problem: self-signed certificate in certificate chain",
		// git's fatal: with curl's "Failed to connect to path port 3000" (docs/install/osx.md, v19.3.0).
		"fatal: unable to access 'https://gitlab.example.invalid:8443/group/project.git/': Failed to connect to gitlab.example.invalid port 8443 after 130 ms: Couldn't connect to server",
	},
	"runner-token": {
		// network/gitlab.go, v19.3.0.
		"ERROR: Checking for jobs... forbidden                runner=Zx8y1Abc status=403 Forbidden",
		// A 422 takes RequestJob's default branch; its status is ResponseError.Error() (network/client.go, v19.3.0).
		"WARNING: Checking for jobs... failed                runner=Zx8y1Abc status=POST https://gitlab.example.invalid/api/v4/jobs/request: 422 Unprocessable Entity",
		"Verifying runner... is not valid                    runner=Zx8y1Abc",
		"ERROR: Verifying runner... is removed                runner=Zx8y1Abc status=403 Forbidden",
		// commands/health_helper.go, v19.3.0.
		`ERROR: Runner "https://gitlab.example.invalidZx8y1Abc" is unhealthy and will be disabled for 1h0m0s seconds!  unhealthy_requests=3 unhealthy_requests_limit=3`,
	},
	"api-auth": {
		"ERROR: Job failed (system failure): prepare environment: setting up credentials: the server has asked for the client to provide credentials (post secrets). Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information",
		// docs/configuration/configuring_runner_operator.md, v19.3.0.
		"ERROR: Job failed (system failure): prepare environment: setting up credentials: Post https://172.21.0.1:443/api/v1/namespaces/<KUBERNETES_NAMESPACE>/secrets: net/http: TLS handshake timeout. Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information",
		// docs/executors/kubernetes/troubleshooting.md, v19.3.0.
		`Error: Job failed (system failure): prepare environment: waiting for pod running: Get "https://xx.xx.xx.x:443/api/v1/namespaces/gitlab-runner/runner-0001": dial tcp xx.xx.xx.x:443 connect: connection refused`,
	},
	"owner-rbac": {
		// docs/install/kubernetes_troubleshooting.md, v19.3.0.
		`ERROR: Job failed (system failure): secrets is forbidden: User "system:serviceaccount:gitlab:default"`,
	},
	"runner-rbac": {
		`ERROR: Job failed (system failure): secrets is forbidden: User "system:serviceaccount:gitlab:default"`,
		// docs/install/kubernetes_troubleshooting.md, v19.3.0 (the message's second line there).
		`cannot create resource "secrets" in API group "" in the namespace "gitlab"`,
	},
	"namespace": {
		// executors/kubernetes/kubernetes.go "setting up build pod: %w", v19.3.0, with NewNotFound's text.
		`ERROR: Job failed (system failure): prepare environment: setting up build pod: namespaces "gitlab-runner" not found. Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information`,
	},
	"pending-no-node": {
		// executors/kubernetes/util.go + common/build.go, v19.3.0.
		"ERROR: Job failed (system failure): prepare environment: waiting for pod running: timed out waiting for pod to start (last phase: Pending). Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information",
	},
	"pending-unschedulable": {
		// executors/kubernetes/util.go getPodPhase ("\t%s: %q"), v19.3.0, with kube-scheduler's message.
		"\tUnschedulable: \"0/2 nodes are available: 2 Insufficient memory. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.\"",
	},
	"image-pull": {
		// executors/kubernetes/internal/watchers/pod.go and internal/pull/errors.go (ImagePullError), v19.3.0,
		// with the kubelet's waiting message.
		`ERROR: Job failed: prepare environment: waiting for pod running: pulling image "registry.example.invalid/ci/golang:1.24" for container build: image pull failed: Back-off pulling image "registry.example.invalid/ci/golang:1.24". Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information`,
		// executors/kubernetes/kubernetes.go "Event retrieved from the cluster: %s", v19.3.0, with
		// pkg/kubelet/images/image_manager.go's events, v1.37.2.
		`WARNING: Event retrieved from the cluster: Failed to pull image "registry.example.invalid/ci/golang:1.24": rpc error: code = NotFound desc = failed to pull and unpack image "registry.example.invalid/ci/golang:1.24": not found`,
		`WARNING: Event retrieved from the cluster: Back-off pulling image "registry.example.invalid/ci/golang:1.24"`,
	},
	"node-local-dns": {
		// docs/executors/kubernetes/troubleshooting.md, v19.3.0.
		"fatal: unable to access 'https://gitlab-ci-token:token@example.com/repo/proj.git/': Could not resolve host: example.com",
		// Go's net.DNSError against the node-local address.
		"dial tcp: lookup gitlab.example.invalid on 169.254.20.10:53: read udp 10.0.0.5:41234->169.254.20.10:53: i/o timeout",
	},
	"scale-to-zero": {
		// executors/kubernetes/autoscaler/pause_pod_manager.go, v19.3.0, in the runner formatter.
		"Starting pause pod manager                          runner=Zx8y1Abc",
		"Created pause pod deployment                        deployment=runner-zx8y1abc-pause replicas=1",
		"Updated pause pod deployment replicas               deployment=runner-zx8y1abc-pause replicas=2",
	},
	"exec-upgrade": {
		// k8s.io/streaming pkg/httpstream/spdy/roundtripper.go, v0.37.2.
		"unable to upgrade connection: unable to read error from server response",
	},
	"namespace-quota": {
		// k8s.io/apiserver pkg/admission/plugin/resourcequota/controller.go, v0.37.2 ("exceeded
		// quota: %s, requested: %s, used: %s, limited: %s", "failed quota: %s: %v"), in
		// admission.NewForbidden's `pods "NAME" is forbidden: %v`, behind the runner's "setting
		// up build pod: %w" (executors/kubernetes/kubernetes.go, v19.3.0).
		`ERROR: Job failed (system failure): prepare environment: setting up build pod: pods "runner-zx8y1abc-project-5-concurrent-0-k3j9m2xq" is forbidden: exceeded quota: compute, requested: limits.memory=21Gi, used: limits.memory=0, limited: limits.memory=16Gi. Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information`,
		`ERROR: Job failed (system failure): prepare environment: setting up build pod: pods "runner-zx8y1abc-project-5-concurrent-0-k3j9m2xq" is forbidden: failed quota: compute: must specify limits.cpu for: build,helper,init-permissions. Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information`,
		// plugin/pkg/admission/limitranger/admission.go, kubernetes v1.37.2.
		`ERROR: Job failed (system failure): prepare environment: setting up build pod: pods "runner-zx8y1abc-project-5-concurrent-0-k3j9m2xq" is forbidden: maximum memory usage per Container is 8Gi, but limit is 20Gi. Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information`,
		`ERROR: Job failed (system failure): prepare environment: setting up build pod: pods "runner-zx8y1abc-project-5-concurrent-0-k3j9m2xq" is forbidden: minimum cpu usage per Container is 100m, but request is 50m. Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information`,
		`ERROR: Job failed (system failure): prepare environment: setting up build pod: pods "runner-zx8y1abc-project-5-concurrent-0-k3j9m2xq" is forbidden: maximum memory usage per Pod is 16Gi, but limit is 24Gi. Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information`,
	},
	"job-identity": {
		// plugin/pkg/admission/serviceaccount/admission.go, kubernetes v1.37.2 ("error looking up
		// service account %s/%s: %w" around the lister's NotFound), behind "setting up build pod: %w".
		`ERROR: Job failed (system failure): prepare environment: setting up build pod: pods "runner-zx8y1abc-project-5-concurrent-0-k3j9m2xq" is forbidden: error looking up service account gitlab-runner/ci: serviceaccount "ci" not found. Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information`,
		// k8s.io/pod-security-admission admission/admission.go, v0.37.2 ("violates PodSecurity %q: %s").
		`ERROR: Job failed (system failure): prepare environment: setting up build pod: pods "runner-zx8y1abc-project-5-concurrent-0-k3j9m2xq" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (containers "init-permissions", "build", "helper" must set securityContext.allowPrivilegeEscalation=false). Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information`,
		// executors/kubernetes/kubernetes.go resourceCheckError, v19.3.0 (resourceTypeServiceAccount,
		// resourceTypePullSecret).
		`ERROR: Job failed (system failure): prepare environment: setting up build pod: Timed out while waiting for ServiceAccount/ci to be present in the cluster. Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information`,
		`ERROR: Job failed (system failure): prepare environment: setting up build pod: Timed out while waiting for ImagePullSecret/registry-credentials to be present in the cluster. Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information`,
		// pkg/kubelet/kubelet.go, kubernetes v1.37.2 (FailedToRetrieveImagePullSecret), as
		// "Event retrieved from the cluster: %s" (executors/kubernetes/kubernetes.go, v19.3.0).
		`WARNING: Event retrieved from the cluster: Unable to retrieve some image pull secrets (registry-credentials); attempting to pull the image may not succeed.`,
	},
	"job-terminations": {
		// executors/kubernetes/kubernetes.go podContainerError, v19.3.0: no BuildError, so a system failure.
		"ERROR: Job failed (system failure): Error in container build: exit code: 137, reason: 'OOMKilled'",
		// executors/kubernetes/kubernetes.go commandTerminatedError, v19.3.0.
		"ERROR: Job failed: command terminated with exit code 137",
		// executors/kubernetes/internal/watchers/pod.go checkTerminalPodErrors, v19.3.0.
		`ERROR: Job failed (system failure): pod "gitlab-runner/runner-zx8y1abc-project-5-concurrent-0-k3j9m2xq" is disrupted: reason "TerminationByKubelet", message "The node was low on resource: memory. Threshold quantity: 100Mi, available: 81920Ki. "`,
		// pkg/kubelet/eviction/helpers.go, kubernetes v1.37.2 (nodeLowMessageFmt + thresholdMetMessageFmt,
		// containerEphemeralStorageMessageFmt, podEphemeralStorageMessageFmt), as
		// "Event retrieved from the cluster: %s" (executors/kubernetes/kubernetes.go, v19.3.0).
		"WARNING: Event retrieved from the cluster: The node was low on resource: ephemeral-storage. Threshold quantity: 1Gi, available: 512Mi. ",
		`WARNING: Event retrieved from the cluster: Container build exceeded its local ephemeral storage limit "4Gi". `,
		"WARNING: Event retrieved from the cluster: Pod ephemeral local storage usage exceeds the total limit of containers 6Gi. ",
	},
	"kubelet-serving": {
		// k8s.io/apimachinery pkg/util/proxy/upgradeaware.go, v0.37.2 ("error dialing backend: %v"),
		// with crypto/tls's alert from a kubelet without a serving certificate, behind
		// "setting up trapping scripts on emptyDir: %w" (executors/kubernetes/kubernetes.go, v19.3.0).
		"ERROR: Job failed (system failure): prepare environment: setting up trapping scripts on emptyDir: error dialing backend: remote error: tls: internal error. Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information",
	},
	"kubelet-reach": {
		// k8s.io/apimachinery pkg/util/proxy/upgradeaware.go, v0.37.2 ("error dialing backend: %v"),
		// with Go's net.OpError for the kubelet's port.
		"ERROR: Job failed (system failure): prepare environment: setting up trapping scripts on emptyDir: error dialing backend: dial tcp 127.0.0.1:10250: i/o timeout. Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information",
		"ERROR: Job failed (system failure): prepare environment: setting up trapping scripts on emptyDir: error dialing backend: dial tcp 127.0.0.1:10250: connect: connection refused. Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information",
		"error dialing backend: dial tcp 127.0.0.1:10250: connect: connection timed out",
		"error dialing backend: dial tcp 127.0.0.1:10250: connect: no route to host",
	},
	"node-arch": {
		// executors/kubernetes/internal/watchers/pod.go CheckTerminalContainerErrors + crashLoopMessage,
		// v19.3.0, with the kubelet's waiting message (pkg/kubelet/kuberuntime/kuberuntime_manager.go,
		// kubernetes v1.37.2) and the last termination's message, behind "waiting for pod running: %w".
		`ERROR: Job failed: prepare environment: waiting for pod running: container "helper" is in CrashLoopBackOff: back-off 20s restarting failed container=helper pod=runner-zx8y1abc-project-5-concurrent-0-k3j9m2xq_gitlab-runner(6f1e2d3c-0a4b-4c5d-8e9f-a0b1c2d3e4f5): exec /usr/bin/dumb-init: exec format error. Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information`,
		// pkg/kubelet/kubelet_pods.go, kubernetes v1.37.2 ("container not found (%q)"), as client-go's
		// "unable to upgrade connection: %s" (k8s.io/streaming pkg/httpstream/spdy/roundtripper.go, v0.37.2).
		`ERROR: Job failed (system failure): prepare environment: setting up trapping scripts on emptyDir: unable to upgrade connection: container not found ("helper"). Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information`,
	},
	"clock-skew": {
		// crypto/x509/verify.go (go1.26) CertificateInvalidError, in crypto/tls's "tls: failed to
		// verify certificate: %w", as network/gitlab.go prints it (v19.3.0).
		`WARNING: Checking for jobs... failed                runner=Zx8y1Abc status=execute JSON request: execute request: couldn't execute POST against https://gitlab.example.invalid/api/v4/jobs/request: Post "https://gitlab.example.invalid/api/v4/jobs/request": tls: failed to verify certificate: x509: certificate has expired or is not yet valid: current time 2026-11-29T12:00:40Z is before 2026-11-29T12:01:00Z`,
		// the same, from client-go behind "setting up credentials: %w" (executors/kubernetes/kubernetes.go, v19.3.0).
		`ERROR: Job failed (system failure): prepare environment: setting up credentials: Post "https://127.0.0.1:6443/api/v1/namespaces/gitlab-runner/secrets": tls: failed to verify certificate: x509: certificate has expired or is not yet valid: current time 2026-11-29T12:02:10Z is after 2026-11-29T12:01:00Z. Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information`,
	},
	"docker-socket": {
		// github.com/moby/moby/client v0.5.1 request.go and errors.go, behind "getting docker info: %w"
		// (executors/docker/docker.go connectDocker, v19.3.0) and "Preparation failed:" (common/build.go).
		"ERROR: Preparation failed: getting docker info: permission denied while trying to connect to the docker API at unix:///var/run/docker.sock",
		"ERROR: Preparation failed: getting docker info: failed to connect to the docker API at unix:///var/run/docker.sock; check if the path is correct and if the daemon is running: dial unix /var/run/docker.sock: connect: no such file or directory",
		"ERROR: Preparation failed: getting docker info: Cannot connect to the Docker daemon at tcp://127.0.0.1:2375. Is the docker daemon running?",
		`ERROR: Preparation failed: getting docker info: the server probably has client authentication (--tlsverify) enabled; check your TLS client certification settings: Get "https://127.0.0.1:2376/v1.55/info": remote error: tls: bad certificate`,
	},
	"helper-image": {
		// executors/docker/docker.go getHelperImage, v19.3.0: BuildLogger.Println (fmt.Sprintln
		// spaces every operand), helperimage.Info's String "%s:%s".
		"Using helper image:  registry.example.invalid/ci/gitlab-runner-helper:x86_64-v19.3.0  (overridden, default would be  registry.gitlab.com/gitlab-org/gitlab-runner/gitlab-runner-helper:x86_64-v19.3.0 )",
		// executors/kubernetes/kubernetes.go Prepare, v19.3.0: Debugln, so the runner's log at debug level.
		"DEBUG: Using helper image: registry.example.invalid/ci/gitlab-runner-helper:x86_64-v19.3.0 (overridden, default would be registry.gitlab.com/gitlab-org/gitlab-runner/gitlab-runner-helper:x86_64-v19.3.0)  job=4242 project=5 runner=Zx8y1Abc",
	},
	"dvp-pool": {
		// executors/internal/autoscaler/executor.go Prepare, v19.3.0, as common/build.go's
		// retryCreateExecutor logs it ("Preparation failed:") and then fails the job
		// ("Job failed (system failure): ").
		"ERROR: Preparation failed: unable to acquire instance within the configured timeout of 15m0s: context deadline exceeded",
		"ERROR: Job failed (system failure): unable to acquire instance within the configured timeout of 15m0s: context deadline exceeded",
		// k8s.io/apimachinery pkg/api/errors NewNotFound, v0.37.2, as the apiserver answers the plugin
		// (fleeting-plugin-dvp's own wrapping is not available to quote).
		`virtualmachinepools.virtualization.deckhouse.io "code-runner" not found`,
	},
	"dvp-rbac": {
		// k8s.io/apiserver pkg/endpoints/handlers/responsewriters/errors.go forbiddenMessage, v0.37.2,
		// in apierrors.NewForbidden (fleeting-plugin-dvp's own wrapping is not available to quote).
		`virtualmachinepools.virtualization.deckhouse.io "code-runner" is forbidden: User "system:serviceaccount:code-runner-dvp:code-runner" cannot patch resource "virtualmachinepools" in API group "virtualization.deckhouse.io" in the namespace "code-runner-dvp"`,
		`virtualmachines.virtualization.deckhouse.io is forbidden: User "system:serviceaccount:code-runner-dvp:code-runner" cannot list resource "virtualmachines" in API group "virtualization.deckhouse.io" in the namespace "code-runner-dvp"`,
	},
	"fleeting-plugin": {
		// executors/internal/autoscaler/provider.go init + Acquire, v19.3.0 ("loading fleeting plugin: %w"
		// around fleeting-artifact pkg/installer's ErrPluginNotFound, "running autoscaler plugin: %w",
		// "initializing taskscaler: %w"), in commands/multi.go's "failed to update executor: %w" and
		// "Failed to process runner".
		"WARNING: Failed to process runner                   builds=0 error=failed to update executor: initializing taskscaler: running autoscaler plugin: loading fleeting plugin: plugin not found: lstat /home/gitlab-runner/.config/fleeting/plugins/registry.gitlab.com/gitlab-org/fleeting/plugins/fleeting-plugin-dvp: no such file or directory executor=instance runner=Zx8y1Abc runner_name=dvp",
		"WARNING: Failed to process runner                   builds=0 error=failed to update executor: initializing taskscaler: running autoscaler plugin: fork/exec /usr/local/bin/fleeting-plugin-dvp: permission denied executor=instance runner=Zx8y1Abc runner_name=dvp",
		"WARNING: Failed to process runner                   builds=0 error=failed to update executor: initializing taskscaler: executor requires autoscaler config executor=instance runner=Zx8y1Abc runner_name=dvp",
	},
	"fleeting-connector": {
		// executors/internal/autoscaler/provider.go init, v19.3.0.
		"WARNING: Failed to process runner                   builds=0 error=failed to update executor: initializing taskscaler: reading instance group connector key: open /ssh/id_ed25519: permission denied executor=instance runner=Zx8y1Abc runner_name=dvp",
		// golang.org/x/crypto v0.54.0 ssh/client.go and ssh/client_auth.go.
		"ERROR: Job failed (system failure): ssh: handshake failed: ssh: unable to authenticate, attempted methods [none publickey], no supported methods remain",
		// common/build.go executePrepareScripts, v19.3.0, with x/crypto ssh/session.go Waitmsg.String.
		"ERROR: Job failed: prepare environment: Process exited with status 2. Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information",
	},
	"fleeting-state": {
		// executors/internal/autoscaler/provider.go instanceReadyUp, v19.3.0 (taskscaler's own log
		// line around them is not available to quote).
		"no data on pre-existing instance so removing for safety",
		"pre-existing instance has acquisition so removing for safety",
		// provider.go init, v19.3.0 ("creating state storage: %w").
		"WARNING: Failed to process runner                   builds=0 error=failed to update executor: initializing taskscaler: creating state storage: mkdir /home/gitlab-runner/state: permission denied executor=instance runner=Zx8y1Abc runner_name=dvp",
	},
}

func matcher(t *testing.T) *symptom.Matcher {
	t.Helper()
	m, err := symptom.New(all.Checks())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestEveryPatternMatchesALineItWasQuotedFrom(t *testing.T) {
	m := matcher(t)
	for _, c := range all.Checks() {
		lines, ok := captured[c.ID]
		if !ok {
			t.Errorf("%s: no captured symptom line in this test's table: add the lines its patterns quote", c.ID)
			continue
		}
		for _, text := range c.Doc.Patterns {
			p, err := symptom.Compile(c.ID, text)
			if err != nil {
				t.Fatal(err)
			}
			hit := false
			for _, l := range lines {
				hit = hit || p.Match(symptom.Clean(l))
			}
			if !hit {
				t.Errorf("%s: pattern %q matches none of its captured lines", c.ID, text)
			}
		}
		for _, l := range lines {
			if !slices.Contains(m.Line(symptom.Clean(l)), c.ID) {
				t.Errorf("%s: its captured line %q does not name it", c.ID, l)
			}
		}
	}
}

// Healthy logs name no check: a pattern that matches a job that worked
// would send every reader of a good log after a cause.
func TestHealthyLogsMatchNothing(t *testing.T) {
	m := matcher(t)
	for _, path := range []string{"../../../testdata/logs/healthy-kubernetes-job.log", "../../../testdata/logs/healthy-runner-journal.log"} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		s, err := m.Scan(path, f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if s.Lines < 15 {
			t.Fatalf("%s: only %d lines", path, s.Lines)
		}
		for _, x := range s.Matches {
			t.Errorf("%s:%d names %v: %q", path, x.Line, x.Checks, x.Text)
		}
	}
}
