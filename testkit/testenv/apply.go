//go:build integration

package testenv

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
)

// Dynamic is a dynamic client as the admin, for custom resources.
func (e *Env) Dynamic() dynamic.Interface {
	d, err := dynamic.NewForConfig(e.AdminConfig())
	e.check(err)
	return d
}

// Apply creates every object of a multi-document YAML manifest as the
// admin, as `kubectl create -f` would (the objects must not exist yet).
// CustomResourceDefinitions are waited for until the apiserver serves
// their resources, so a manifest may be applied right after its CRDs.
func (e *Env) Apply(manifest []byte) []*unstructured.Unstructured {
	dc, err := discovery.NewDiscoveryClientForConfig(e.AdminConfig())
	e.check(err)
	cached := memory.NewMemCacheClient(dc)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(cached)
	dyn := e.Dynamic()
	var out []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(manifest), 4096)
	for {
		var obj map[string]any
		if err := dec.Decode(&obj); errors.Is(err, io.EOF) {
			break
		} else {
			e.check(err)
		}
		if len(obj) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: obj}
		gvk := u.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if meta.IsNoMatchError(err) {
			cached.Invalidate()
			m, err = mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		}
		e.check(err)
		ctx, cancel := e.ctx()
		var created *unstructured.Unstructured
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			created, err = dyn.Resource(m.Resource).Namespace(u.GetNamespace()).Create(ctx, u, metav1.CreateOptions{})
		} else {
			created, err = dyn.Resource(m.Resource).Create(ctx, u, metav1.CreateOptions{})
		}
		cancel()
		e.check(err)
		out = append(out, created)
		if gvk.Kind == "CustomResourceDefinition" {
			e.waitServed(dc, created)
			cached.Invalidate()
		}
	}
	return out
}

// waitServed polls discovery until the CRD's resource is listed.
func (e *Env) waitServed(dc discovery.DiscoveryInterface, crd *unstructured.Unstructured) {
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	version := ""
	if len(versions) > 0 {
		version, _, _ = unstructured.NestedString(versions[0].(map[string]any), "name")
	}
	gv := schema.GroupVersion{Group: group, Version: version}.String()
	deadline := time.Now().Add(30 * time.Second)
	for {
		list, err := dc.ServerResourcesForGroupVersion(gv)
		if err == nil {
			for _, r := range list.APIResources {
				if r.Name == plural {
					return
				}
			}
		} else if !apierrors.IsNotFound(err) {
			e.check(err)
		}
		if time.Now().After(deadline) {
			e.check(fmt.Errorf("CRD %s.%s not served after 30s", plural, group))
		}
		time.Sleep(100 * time.Millisecond)
	}
}
