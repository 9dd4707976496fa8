module github.com/hotpathhq/hotpath

go 1.24
