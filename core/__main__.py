from biocite.cli import main

main()
