package store_test

import (
	"testing"

	"github.com/truckjobs/jobboard/server/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }
