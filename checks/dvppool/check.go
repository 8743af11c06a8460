// Package dvppool checks the VirtualMachinePool fleeting-plugin-dvp scales:
// that it exists, and that what it stamps out is a VM the runner can use.
package dvppool

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
)

const (
	group   = kubefacts.DVPGroup
	version = kubefacts.DVPVersion
)

var (
	poolsGVR         = schema.GroupVersionResource{Group: group, Version: version, Resource: "virtualmachinepools"}
	vmsGVR           = schema.GroupVersionResource{Group: group, Version: version, Resource: "virtualmachines"}
	imagesGVR        = schema.GroupVersionResource{Group: group, Version: version, Resource: "virtualimages"}
	clusterImagesGVR = schema.GroupVersionResource{Group: group, Version: version, Resource: "clustervirtualimages"}
)

// The job log of a job no instance was found for: the executor's Prepare
// error (executors/internal/autoscaler/executor.go, gitlab-runner v19.3.0:
// "unable to acquire instance within the configured timeout of %s: %w")
// as build.go's retryCreateExecutor logs it ("Preparation failed:",
// common/build.go, v19.3.0). The pool missing is the apiserver's NotFound
// the plugin passes on (k8s.io/apimachinery pkg/api/errors NewNotFound:
// `%s %q not found` with the qualified resource): fleeting-plugin-dvp's own
// source is not available to doctor, so its words are not quoted.
const symptom = "ERROR: Preparation failed: unable to acquire instance within the configured timeout of 15m0s: context deadline exceeded"

var Check = &checks.Check{
	ID:       "dvp-pool",
	Title:    "The VirtualMachinePool of fleeting-plugin-dvp exists and makes VMs the runner can use",
	Severity: checks.Error,
	Doc: checks.Doc{
		Cause: "fleeting-plugin-dvp creates neither the pool nor the user on its VMs: it sets spec.replicas of the " +
			"VirtualMachinePool named by plugin_config {namespace, name} and deletes finished VMs by name. A missing pool " +
			"gives no job a VM. A pool that picks replicas itself on scale-down (scaleDownPolicy other than Explicit) " +
			"fights those deletions; replicas above max_instances run VMs the runner never uses; a pool without a VM " +
			"template, a sized disk or the VirtualImage its disk is filled from never gets a VM to Running; and a " +
			"cloud-init that does not create connector_config.username with the public half of key_path's key makes " +
			"every SSH connection fail. VMs that stay not Running longer than the runner waits for an instance " +
			"(instance_acquire_timeout, 15m by default) fail the jobs waiting on them.",
		Symptom: symptom,
		Fix: checks.Text("Apply the guide's code-runner-pool.yaml with the names of plugin_config, scaleDownPolicy: Explicit, " +
			"replicas: 0, the VirtualImage of the namespace and the public key of key_path (ssh-keygen -y -f KEY_PATH) " +
			"under the user connector_config.username."),
		Verify: checks.Steps{
			checks.Say("With the plugin's kubeconfig (plugin_config's kubeconfig_path) and the pool's namespace and name (plugin_config's namespace and name):"),
			checks.Sh(`export PLUGIN_KUBECONFIG=/etc/gitlab-runner/dvp.kubeconfig POOL_NAMESPACE=code-runner-dvp POOL=code-runner
d8 k --kubeconfig "$PLUGIN_KUBECONFIG" -n "$POOL_NAMESPACE" get virtualmachinepool "$POOL" -o yaml
d8 k --kubeconfig "$PLUGIN_KUBECONFIG" -n "$POOL_NAMESPACE" get vm -l vmpool.virtualization.deckhouse.io/pool="$POOL"`)},
		Patterns: []string{
			// executors/internal/autoscaler/executor.go, v19.3.0 ("unable to acquire instance within the
			// configured timeout of %s: %w"), as common/build.go, v19.3.0, logs it between retries
			// ("Preparation failed:") and when it fails the job ("Job failed (system failure): ").
			"Preparation failed: unable to acquire instance within the configured timeout of *",
			"Job failed (system failure): unable to acquire instance*",
			// k8s.io/apimachinery pkg/api/errors/errors.go NewNotFound, v0.37.2 ("%s %q not found").
			`virtualmachinepools.virtualization.deckhouse.io "*" not found`,
		},
	},
	// The operator's own client is optional: it reads the VirtualImage when
	// the plugin's identity may not (the guide's Role does not grant it,
	// and the plugin does not need it).
	// RunAs gives the working directory a relative key_path is read from.
	Requires:  []checks.Node{kubefacts.PluginAPIClientFact, configfacts.RunnerEntryFact, hostfacts.RunnerFact, hostfacts.RunAsFact, checks.Optional(kubefacts.APIClientFact)},
	Executors: []string{checks.Instance, checks.DockerAutoscaler},
	Network:   true,
	Run:       run,
}

func run(p *checks.Pass) error {
	pa, r := kubefacts.PluginAPIClientFact.Get(p), configfacts.RunnerEntryFact.Get(p)
	pc := pa.Config
	switch {
	case pa.NotDVP != "":
		return checks.Skip("%s", pa.NotDVP)
	case pc.Namespace == "" || pc.Name == "":
		src, _ := r.At("autoscaler", "plugin_config")
		p.Report(checks.Finding{
			Severity: checks.Critical,
			Cause:    fmt.Sprintf("%s: plugin_config does not name the pool (namespace %q, name %q): fleeting-plugin-dvp has no VirtualMachinePool to scale.", r.Label(), pc.Namespace, pc.Name),
			Evidence: []checks.Evidence{{Source: src, Detail: strings.Join(append([]string{"plugin_config needs namespace and name"}, pc.Problems...), "; ")}},
			Fix:      checks.Text("Set [runners.autoscaler.plugin_config] namespace and name to the namespace and name of the VirtualMachinePool."),
		})
		return nil
	case poolNameErr(pc) != nil:
		// No VirtualMachinePool can be there: the apiserver takes a
		// namespace's name as a DNS-1123 label, and a custom resource's as
		// a DNS-1123 subdomain (apiextensions-apiserver
		// pkg/registry/customresource/validator.go, v0.37.2:
		// ValidateObjectMetaDeclaratively with NameIsDNSSubdomain). A fix
		// carrying either would carry whatever it holds.
		src, _ := r.At("autoscaler", "plugin_config")
		p.Report(checks.Finding{
			Severity: checks.Critical,
			Cause:    fmt.Sprintf("%s: %s: no VirtualMachinePool can be there, so fleeting-plugin-dvp has none to scale and no job gets a VM.", r.Label(), poolNameErr(pc)),
			Evidence: []checks.Evidence{{Source: src, Detail: fmt.Sprintf("namespace %q, name %q", pc.Namespace, pc.Name)}},
			Fix: checks.Text("Set [runners.autoscaler.plugin_config] namespace and name to the namespace and name of the VirtualMachinePool: " +
				"lower-case letters, digits and '-' (and '.' in the name), at most 63 characters for the namespace."),
		})
		return nil
	case pa.None != "":
		p.Report(checks.Finding{
			Severity: checks.Critical,
			Cause:    fmt.Sprintf("%s: fleeting-plugin-dvp has no identity for the cluster, so it cannot read or scale pool %s: no job gets a VM.", r.Label(), pc.Pool()),
			Evidence: []checks.Evidence{{Source: pa.NoneSource, Detail: pa.None}},
			Fix:      checks.Text("Run the runner in the pool's cluster with a service account bound to the guide's code-runner Role, or set plugin_config kubeconfig_path to a kubeconfig whose user has that Role's rights."),
		})
		return nil
	case pa.Identity != nil && pa.Identity.Err != nil:
		p.Report(checks.Finding{
			Severity: checks.Critical,
			Cause:    fmt.Sprintf("%s: the cluster refuses fleeting-plugin-dvp's credential (%s): it cannot read or scale pool %s.", r.Label(), pa.Source, pc.Pool()),
			Evidence: []checks.Evidence{{Source: "POST " + pa.API.Server + "/apis/authentication.k8s.io/v1/selfsubjectreviews", Detail: pa.Identity.Err.Error()}},
			Fix:      checks.Text("Give the plugin a valid credential: a fresh kubeconfig at plugin_config kubeconfig_path, or the pod's service-account token."),
		})
		return nil
	}
	dyn, err := checks.Shared(p, "dynamic "+pa.API.Key, pa.API.Dynamic)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(p.Context, p.Env.APITimeout())
	defer cancel()
	pool, err := dyn.Resource(poolsGVR).Namespace(pc.Namespace).Get(ctx, pc.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		p.Report(checks.Finding{
			Severity: checks.Critical,
			Cause:    fmt.Sprintf("%s: VirtualMachinePool %s does not exist: fleeting-plugin-dvp has nothing to scale and no job gets a VM.", r.Label(), pc.Pool()),
			Evidence: []checks.Evidence{{Source: "GET " + poolPath(pc) + " as " + identity(pa), Detail: "404: " + err.Error()}},
			Fix:      poolFix(p, pc),
		})
		return nil
	case apierrors.IsForbidden(err):
		return fmt.Errorf("%s may not get virtualmachinepools.%s in namespace %s (see dvp-rbac): %v", identity(pa), group, pc.Namespace, err)
	case err != nil:
		return fmt.Errorf("GET %s: %w", poolPath(pc), err)
	}
	for _, f := range specFindings(pool, pc, r.Label()) {
		p.Report(f)
	}
	var unverified []string
	unverified = append(unverified, checkCloudInit(p, pool, pc, r)...)
	unverified = append(unverified, checkImages(p, ctx, dyn, pool, pa, r.Label())...)
	unverified = append(unverified, checkVMs(p, ctx, dyn, pool, pa, r)...)
	if len(unverified) > 0 {
		return fmt.Errorf("could not verify %s", strings.Join(unverified, "; "))
	}
	return nil
}

func identity(pa *kubefacts.PluginAPIClient) string {
	if pa.Identity != nil && pa.Identity.User != "" {
		return pa.Identity.User
	}
	return "the plugin's identity (" + pa.Source + ")"
}

// poolFix is the guide's pool manifest with the runner's own names.
func poolFix(p *checks.Pass, pc configfacts.PluginConfig) checks.Steps {
	r := configfacts.RunnerEntryFact.Get(p)
	user, key := "gitlab-runner", ""
	if a := r.Runner.Autoscaler; a != nil {
		if a.ConnectorConfig.Username != "" {
			user = a.ConnectorConfig.Username
		}
		key = a.ConnectorConfig.KeyPathname
	}
	return checks.Steps{
		checks.Say(fmt.Sprintf("Create the pool the runner names, as the guide's code-runner-pool.yaml does: namespace %s, name %s, replicas: 0, "+
			"scaleDownPolicy: Explicit, a cloud-init user %s whose ssh_authorized_keys holds the public half of key_path, "+
			"and a disk template from a VirtualImage of namespace %s. The public half:", pc.Namespace, pc.Name, user, pc.Namespace)),
		publicHalfStep(key, runnerCwd(p)),
		checks.Say("Then apply it:"),
		newD8k(pc).apply(),
	}
}

// poolNameErr says why plugin_config's namespace or name is no name a
// VirtualMachinePool can have, or nil.
func poolNameErr(pc configfacts.PluginConfig) error {
	if err := fixcode.NamespaceName(pc.Namespace); err != nil {
		return fmt.Errorf("plugin_config's namespace %q is %w", pc.Namespace, err)
	}
	if err := fixcode.ObjectName(pc.Name); err != nil {
		return fmt.Errorf("plugin_config's name %q is %w", pc.Name, err)
	}
	return nil
}

// runnerCwd is the runner's working directory, "" when unknown.
func runnerCwd(p *checks.Pass) string {
	if ra := hostfacts.RunAsFact.Get(p); ra != nil {
		return ra.Cwd
	}
	return ""
}

// getImage reads an image with the plugin's identity, then, if that may
// not, with the operator's; forbidden says neither may.
func getImage(p *checks.Pass, ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, ns, name string) (found, forbidden bool, err error) {
	get := func(d dynamic.Interface) error {
		if ns == "" {
			_, err := d.Resource(gvr).Get(ctx, name, metav1.GetOptions{})
			return err
		}
		_, err := d.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		return err
	}
	err = get(dyn)
	if apierrors.IsForbidden(err) && p.Has(kubefacts.APIClientFact) {
		if op := kubefacts.APIClientFact.Get(p); op != nil {
			if od, derr := checks.Shared(p, "dynamic "+op.Key, op.Dynamic); derr == nil {
				err = get(od)
			}
		}
	}
	switch {
	case err == nil:
		return true, false, nil
	case apierrors.IsNotFound(err):
		return false, false, nil
	case apierrors.IsForbidden(err):
		return false, true, nil
	}
	return false, false, err
}

func checkImages(p *checks.Pass, ctx context.Context, dyn dynamic.Interface, pool *unstructured.Unstructured, pa *kubefacts.PluginAPIClient, label string) []string {
	var unverified []string
	pc := pa.Config
	for _, img := range diskImages(pool) {
		gvr, ns, path := imagesGVR, pc.Namespace, fmt.Sprintf("/apis/%s/%s/namespaces/%s/virtualimages/%s", group, version, pc.Namespace, img.Name)
		if img.Kind == "ClusterVirtualImage" {
			gvr, ns, path = clusterImagesGVR, "", fmt.Sprintf("/apis/%s/%s/clustervirtualimages/%s", group, version, img.Name)
		}
		found, forbidden, err := getImage(p, ctx, dyn, gvr, ns, img.Name)
		switch {
		case err != nil:
			unverified = append(unverified, fmt.Sprintf("%s %s: %v", img.Kind, img.Name, err))
		case forbidden:
			unverified = append(unverified, fmt.Sprintf("%s %s (neither the plugin's identity nor doctor's may get %s; give doctor --kubeconfig of one that may)", img.Kind, img.Name, gvr.Resource))
		case !found:
			where := "in namespace " + pc.Namespace
			if ns == "" {
				where = "in the cluster"
			}
			p.Report(checks.Finding{
				Cause: fmt.Sprintf("%s: disk template %q of VirtualMachinePool %s is filled from %s %s, which does not exist %s: no VM of the pool gets a disk, none becomes Running.",
					label, img.Disk, pc.Pool(), img.Kind, img.Name, where),
				Evidence: []checks.Evidence{{Source: "GET " + path, Detail: "404: not found"}},
				Fix:      checks.Text(fmt.Sprintf("Create %s %s %s (the guide's disk image needs an SSH server, bash and git), or point the disk template's dataSource.objectRef at an image that exists.", img.Kind, img.Name, where)),
			})
		}
	}
	return unverified
}
