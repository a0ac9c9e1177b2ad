package store_test

import (
	"testing"

	"jobboard/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }
