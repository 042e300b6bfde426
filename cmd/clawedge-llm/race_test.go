//go:build llamacpp && race

package main

const raceEnabled = true
