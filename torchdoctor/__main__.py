from torchdoctor.cli import main

main(prog_name="torchdoctor")
