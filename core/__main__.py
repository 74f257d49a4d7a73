from biocite.app.cli import main

main()
