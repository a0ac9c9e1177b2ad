package store_test

import (
	"testing"

	"github.com/truckjobs/jobboard/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }
