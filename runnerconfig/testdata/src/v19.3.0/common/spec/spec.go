// Trimmed copy of gitlab-runner v19.3.0 (tag commit
// 9cbf0074ddb0e2f79d79f44406cafebf09117b64), made by
// internal/source/runnerversion/keygen: only the package clause, the imports and,
// byte for byte, the declarations the config.toml key walk reads. Copyright
// (c) 2015-2019 GitLab Inc., MIT License; the full text is in
// runnerconfig/testdata/src/LICENSE.

package spec

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	url_helpers "gitlab.com/gitlab-org/gitlab-runner/helpers/url"
	"gitlab.com/gitlab-org/gitlab-runner/helpers/vault/auth_methods"
	"gitlab.com/gitlab-org/step-runner/schema/v1"
)

type PullPolicy string
