package apiauth

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// An API error quotes what the server sent; the finding quotes at most
// maxMessage runes of it, on one line, without the secrets in it.
func TestClassifyCutsAndRedactsTheServersText(t *testing.T) {
	body := "token=Tk9Qz2Lm5Tx8Wb3 \n" + strings.Repeat("\xffA", 1<<20)
	for _, err := range []error{
		apierrors.NewGenericServerResponse(502, "get", schema.GroupResource{Resource: "selfsubjectreviews"}, "", body, 0, true),
		apierrors.NewUnauthorized(body),
		errors.New(body),
	} {
		c := Classify(err)
		for name, s := range map[string]string{"message": c.Message, "detail": c.Detail} {
			if n := utf8.RuneCountInString(s); n > maxMessage+1 {
				t.Errorf("%T: the %s is %d runes", err, name, n)
			}
			if strings.Contains(s, "Tk9Qz2Lm5Tx8Wb3") || strings.Contains(s, "\n") || !utf8.ValidString(s) {
				t.Errorf("%T: the %s is not fit to print: %.120q", err, name, s)
			}
		}
	}
}
