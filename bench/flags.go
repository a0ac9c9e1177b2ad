package main

import (
	"strconv"
	"strings"
)

// intList is a flag of comma-separated integers.
type intList []int

func (l *intList) String() string {
	var s []string
	for _, n := range *l {
		s = append(s, strconv.Itoa(n))
	}
	return strings.Join(s, ",")
}

func (l *intList) Set(v string) error {
	for _, part := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil {
			return err
		}
		*l = append(*l, n)
	}
	return nil
}
