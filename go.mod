module github.com/commcost/commcost

go 1.26.8
