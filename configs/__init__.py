"""Settings presets (YAML): installed as the package `biocite.configs`."""
