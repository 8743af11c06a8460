package dvppool_test

import (
	"testing"

	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/dvppool"
)

func TestCases(t *testing.T) { checktest.Cases(t, dvppool.Check) }
