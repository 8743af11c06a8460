package keep

import (
	"bytes"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	"math/rand"
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	certsv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	schedv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/randfill"
)

// scheme holds the kinds of Kinds, as checks/client/kube's client decodes them.
var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, authnv1.AddToScheme,
		authzv1.AddToScheme, certsv1.AddToScheme, schedv1.AddToScheme, admissionv1.AddToScheme, metav1.AddMetaToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}()

var codecs = serializer.WithoutConversionCodecFactory{CodecFactory: serializer.NewCodecFactory(scheme)}

// encode is obj as the apiserver sends it in the given media type.
func encode(t testing.TB, obj runtime.Object, media string) []byte {
	t.Helper()
	info, ok := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), media)
	if !ok {
		t.Fatalf("no serializer for %s", media)
	}
	gvks, _, err := scheme.ObjectKinds(obj)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := codecs.EncoderForVersion(info.Serializer, gvks[0].GroupVersion()).Encode(obj, &buf); err != nil {
		t.Fatalf("encoding %T as %s: %v", obj, media, err)
	}
	return buf.Bytes()
}

// decode is what client-go makes of b: into a new value of into's type.
func decode(t testing.TB, b []byte, media string, into runtime.Object) runtime.Object {
	t.Helper()
	info, _ := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), media)
	out := reflect.New(reflect.TypeOf(into).Elem()).Interface().(runtime.Object)
	got, _, err := codecs.UniversalDeserializer().Decode(b, nil, out)
	if err != nil {
		t.Fatalf("decoding the cut %s: %v\n%.600q", media, err, b)
	}
	_ = info
	got.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	return got
}

// filler makes random objects that both encodings carry alike: times to
// the second (JSON's precision), quantities in canonical form, no
// managedFields (whose raw JSON randfill cannot make).
func filler(seed int64) *randfill.Filler {
	return randfill.New().RandSource(rand.NewSource(seed)).NilChance(0.15).NumElements(0, 3).MaxDepth(12).Funcs(
		func(q *resource.Quantity, c randfill.Continue) {
			*q = *resource.NewMilliQuantity(c.Int63n(1<<40), resource.DecimalSI)
			_ = q.String()
		},
		func(tm *metav1.Time, c randfill.Continue) { *tm = metav1.Unix(c.Int63n(4e9), 0) },
		func(tm *metav1.MicroTime, c randfill.Continue) {
			*tm = metav1.NewMicroTime(metav1.Unix(c.Int63n(4e9), c.Int63n(1e6)*1000).Time)
		},
		func(x *intstr.IntOrString, c randfill.Continue) { *x = intstr.FromInt32(c.Int31()) },
		func(m *metav1.ObjectMeta, c randfill.Continue) {
			c.FillNoCustom(m)
			m.ManagedFields = nil
		},
		func(tm *metav1.TypeMeta, c randfill.Continue) {},
		func(lm *metav1.ListMeta, c randfill.Continue) {
			c.FillNoCustom(lm)
			lm.RemainingItemCount = nil
		},
		func(e *runtime.RawExtension, c randfill.Continue) {},
		func(f *metav1.FieldsV1, c randfill.Continue) {},
		func(s *string, c randfill.Continue) {
			// Printable text, and now and then a quote or a backslash,
			// which JSON escapes.
			const chars = `abcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123456789-_./:"\ é`
			n := c.Intn(12)
			b := make([]rune, n)
			rs := []rune(chars)
			for i := range b {
				b[i] = rs[c.Intn(len(rs))]
			}
			*s = string(b)
		},
	)
}

// typedKinds are the kinds of Kinds with Go types, each and its list.
func typedKinds() []runtime.Object {
	var out []runtime.Object
	for _, k := range Kinds {
		if k.Go == nil {
			continue
		}
		out = append(out, reflect.New(reflect.TypeOf(k.Go)).Interface().(runtime.Object))
		if k.List != nil {
			out = append(out, reflect.New(reflect.TypeOf(k.List)).Interface().(runtime.Object))
		}
	}
	return out
}
