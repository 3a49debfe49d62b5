// Package proc reads what this process uses of the machine: its CPU time
// and its open files.
package proc
