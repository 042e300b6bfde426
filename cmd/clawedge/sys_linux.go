package main

import "syscall"

// syscallNoCTTY keeps doctor's probe open of a tty from making it our controlling terminal.
const syscallNoCTTY = syscall.O_NOCTTY
