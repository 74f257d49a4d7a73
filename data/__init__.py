"""The data biocite ships (see PROVENANCE.md): installed as the package `biocite.data`."""
