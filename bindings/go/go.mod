module outlive.dev/outlive

go 1.19
