package keep

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

const (
	mediaProto = "application/vnd.kubernetes.protobuf"
	mediaJSON  = "application/json"
)

func TestKindsCompile(t *testing.T) {
	m, err := compiled()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range Kinds {
		if m[kindKey{k.APIVersion, k.Kind}] == nil {
			t.Errorf("%s %s: not compiled", k.APIVersion, k.Kind)
		}
		if (k.List != nil || k.Listed) && m[kindKey{k.APIVersion, k.Kind + "List"}] == nil {
			t.Errorf("%s %sList: not compiled", k.APIVersion, k.Kind)
		}
	}
}

// A declaration that names a struct whole, a field that is not there, or
// a list without its [] is refused: a path ends where a check reads.
func TestDeclarationsAreChecked(t *testing.T) {
	for _, path := range []string{"spec", "spec.containers", "spec.nodename", "metadata.labels.x", "status.phase[]", "spec.nodeName{keys}"} {
		if _, err := compile(reflect.TypeFor[corev1.Pod](), []string{path}); err == nil {
			t.Errorf("%q compiled", path)
		}
	}
}

// project is obj with every field n does not keep zeroed: what the cut,
// decoded, must equal.
func project(v reflect.Value, n *node) {
	t := v.Type()
	for i := range t.NumField() {
		sf, fv := t.Field(i), v.Field(i)
		tag, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if tag == "" && sf.Anonymous {
			if sf.Type == reflect.TypeFor[metav1.TypeMeta]() {
				fv.Set(reflect.Zero(sf.Type))
				continue
			}
			project(fv, n)
			continue
		}
		f := n.byJSON[tag]
		if f == nil {
			fv.Set(reflect.Zero(sf.Type))
			continue
		}
		switch {
		case f.shape == message && fv.Kind() == reflect.Pointer:
			if !fv.IsNil() {
				project(fv.Elem(), f.child)
			}
		case f.shape == message && fv.Kind() == reflect.Slice:
			for j := range fv.Len() {
				project(fv.Index(j), f.child)
			}
		case f.shape == message:
			project(fv, f.child)
		case f.keysOnly:
			for _, k := range fv.MapKeys() {
				fv.SetMapIndex(k, reflect.Zero(fv.Type().Elem()))
			}
		case f.keepValue != nil:
			for _, k := range fv.MapKeys() {
				if !f.keepValue(k.String()) {
					fv.SetMapIndex(k, reflect.Zero(fv.Type().Elem()))
				}
			}
		case f.transform != nil && fv.Kind() == reflect.String:
			fv.SetString(f.transform(fv.String()))
		}
	}
}

// The protobuf cut and the JSON cut of the same object decode to the same
// Go value, and that value is the object with exactly the fields of its
// kind kept: a live run (protobuf) sees what a recorded one (JSON) sees,
// and what a replayed one does.
func TestProtobufAndJSONCutsDecodeAlike(t *testing.T) {
	for _, proto := range typedKinds() {
		t.Run(reflect.TypeOf(proto).Elem().Name(), func(t *testing.T) {
			gvks, _, _ := scheme.ObjectKinds(proto)
			n := kindNode(gvks[0].GroupVersion().String(), gvks[0].Kind)
			for seed := range int64(40) {
				obj := proto.DeepCopyObject()
				filler(seed).Fill(obj)
				var cuts []runtime.Object
				for _, media := range []string{mediaProto, mediaJSON} {
					cut, err := cutOf(encode(t, obj, media), media, Request{URL: "test", Run: &Run{}})
					if err != nil {
						t.Fatalf("seed %d %s: %v", seed, media, err)
					}
					cuts = append(cuts, decode(t, cut, media, proto))
				}
				want := obj.DeepCopyObject()
				project(reflect.ValueOf(want).Elem(), n)
				if !equality.Semantic.DeepEqual(cuts[0], cuts[1]) {
					pj, _ := json.Marshal(cuts[0])
					jj, _ := json.Marshal(cuts[1])
					t.Fatalf("seed %d: the protobuf cut decodes to\n%s\nthe JSON cut to\n%s", seed, pj, jj)
				}
				if !equality.Semantic.DeepEqual(want, cuts[0]) {
					wj, _ := json.Marshal(want)
					gj, _ := json.Marshal(cuts[0])
					t.Fatalf("seed %d: want the kept fields\n%s\ngot\n%s", seed, wj, gj)
				}
			}
		})
	}
}

func cutOf(b []byte, media string, req Request) ([]byte, error) {
	if media == mediaProto {
		return Protobuf(b, req)
	}
	return JSON(b, req)
}

// A cut answer cut again is the same bytes: analyze, which cuts what the
// recorded run cut, sees what it saw.
func TestJSONCutIsIdempotent(t *testing.T) {
	for _, proto := range typedKinds() {
		for seed := range int64(10) {
			obj := proto.DeepCopyObject()
			filler(seed).Fill(obj)
			once, err := JSON(encode(t, obj, mediaJSON), Request{URL: "test", Run: &Run{}})
			if err != nil {
				t.Fatal(err)
			}
			twice, err := JSON(once, Request{URL: "test", Run: &Run{}})
			if err != nil || !bytes.Equal(once, twice) {
				t.Fatalf("%T seed %d: cut again: %v\n%s\n%s", obj, seed, err, once, twice)
			}
		}
	}
}

// What no check reads never leaves the cut: env values and names, args,
// command, annotations, managedFields, a Secret's data.
func TestCutDropsWhatNoCheckReads(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "runner-x-project-1-concurrent-0-abc", Namespace: "ci",
			Annotations:   map[string]string{"kubectl.kubernetes.io/last-applied-configuration": `{"SMTP_PASS":"hunter2-annotation"}`},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl-managedfields-secret"}}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "build", Image: "alpine", Command: []string{"sh", "-c", "echo command-secret-value"},
			Args:      []string{"--password=args-secret-value"},
			Env:       []corev1.EnvVar{{Name: "GITHUB_PAT", Value: "ghp_env-secret-value"}, {Name: "CI_JOB_JWT_V2", Value: "eyJjwt-secret-value"}},
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}},
		}}},
	}
	for _, media := range []string{mediaProto, mediaJSON} {
		cut, err := cutOf(encode(t, pod, media), media, Request{URL: "test", Run: &Run{}})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{"hunter2", "managedfields-secret", "command-secret", "args-secret", "env-secret", "jwt-secret", "GITHUB_PAT", "last-applied", "alpine"} {
			if bytes.Contains(cut, []byte(s)) {
				t.Errorf("%s: the cut holds %q", media, s)
			}
		}
		got := decode(t, cut, media, pod).(*corev1.Pod)
		if got.Name != pod.Name || got.Spec.Containers[0].Name != "build" || got.Spec.Containers[0].Resources.Limits.Memory().String() != "1Gi" {
			t.Errorf("%s: what checks read is gone: %+v", media, got)
		}
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Data: map[string][]byte{"token": []byte("secret-data-value")}}
	for _, media := range []string{mediaProto, mediaJSON} {
		_, err := cutOf(encode(t, secret, media), media, Request{URL: "https://x/api/v1/namespaces/ci/secrets/s", Run: &Run{}})
		var nr *ErrNotRead
		if !errors.As(err, &nr) || nr.Kind != "Secret" || !strings.Contains(err.Error(), "does not read") {
			t.Errorf("%s: a Secret: %v, want ErrNotRead", media, err)
		}
	}
}

// A node's annotations keep their keys (kubelet-serving reads k3s.io/
// ones) and never their values.
func TestAnnotationKeysOnly(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Annotations: map[string]string{"k3s.io/node-args": `["--token","k3s-join-token-value"]`}}}
	for _, media := range []string{mediaProto, mediaJSON} {
		cut, err := cutOf(encode(t, node, media), media, Request{URL: "test", Run: &Run{}})
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(cut, []byte("k3s-join-token")) {
			t.Errorf("%s: an annotation's value was kept", media)
		}
		got := decode(t, cut, media, node).(*corev1.Node)
		if _, ok := got.Annotations["k3s.io/node-args"]; !ok {
			t.Errorf("%s: the annotation's key is gone", media)
		}
	}
}

func podList(n int) *corev1.PodList {
	l := &corev1.PodList{}
	for i := range n {
		l.Items = append(l.Items, corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i)}})
	}
	return l
}

// A list holds no more items than the limit asked: one more is a hostile
// server, refused before anything is decoded.
func TestItemsBoundedByTheLimitAsked(t *testing.T) {
	for _, media := range []string{mediaProto, mediaJSON} {
		run := &Run{}
		b := encode(t, podList(11), media)
		if _, err := cutOf(b, media, Request{URL: "u", Limit: 11, Run: run}); err != nil {
			t.Errorf("%s: 11 items at limit 11: %v", media, err)
		}
		_, err := cutOf(b, media, Request{URL: "https://api/api/v1/pods?limit=10", Limit: 10, Run: run})
		var tm *ErrTooMuch
		if !errors.As(err, &tm) || tm.What != "items" || !strings.Contains(err.Error(), "limit=10") || !strings.Contains(err.Error(), "https://api/api/v1/pods") {
			t.Errorf("%s: 11 items at limit 10: %v", media, err)
		}
	}
}

// One repeated field with more elements than MaxRepeated is refused.
func TestRepeatedFieldsBounded(t *testing.T) {
	pod := &corev1.Pod{}
	for range MaxRepeated + 1 {
		pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{})
	}
	for _, media := range []string{mediaProto, mediaJSON} {
		_, err := cutOf(encode(t, pod, media), media, Request{URL: "u", Run: &Run{}})
		var tm *ErrTooMuch
		if !errors.As(err, &tm) || tm.What != "elements of conditions" {
			t.Errorf("%s: %d conditions: %v", media, MaxRepeated+1, err)
		}
	}
}

// The run's decoded objects are bounded across answers, and an answer that
// fails gives back what it counted.
func TestRunDecodedBounded(t *testing.T) {
	for _, media := range []string{mediaProto, mediaJSON} {
		run := &Run{}
		b := encode(t, podList(1000), media)
		var err error
		answers := 0
		for ; answers < 1000 && err == nil; answers++ {
			_, err = cutOf(b, media, Request{URL: "u", Run: run})
		}
		var tm *ErrTooMuch
		if !errors.As(err, &tm) || tm.What != "decoded" {
			t.Fatalf("%s: %v after %d answers", media, err, answers)
		}
		// 1,000 pods of 1,240 bytes (and their names) an answer: the bound
		// is reached at the answer that passes it, not before, not later.
		if most := MaxRunDecoded/(1000*int64(reflect.TypeFor[corev1.Pod]().Size())) + 1; int64(answers) > most || int64(answers) < most-2 {
			t.Errorf("%s: bound reached at answer %d, want %d or just before", media, answers, most)
		}
		if run.Decoded() > MaxRunDecoded {
			t.Errorf("%s: the failed answer stays counted: %d", media, run.Decoded())
		}
	}
}
