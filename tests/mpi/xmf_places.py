"""Checks that every image an .xmf lists points where its HDF5 file holds that image: each
Attribute's Seek is the byte offset of the chunk of that image (of that member, in a sweep).
Exit status 0 when so, 1 with one line per difference. Usage: xmf_places.py FILE.h5"""
import re
import sys
import xml.etree.ElementTree as ET

import h5py


def main(path):
    problems = []
    root = ET.parse(path[:-3] + ".xmf").getroot()
    with h5py.File(path, "r") as f:
        for i, step in enumerate(root.find("Domain").find("Grid").findall("Grid")):
            grids = step.findall("Grid") or [step]  # a sweep: one grid per member
            for grid in grids:
                member = int(re.search(r"\d+", grid.get("Name")).group()) if grid is not step else None
                for attribute in grid.findall("Attribute"):
                    name = attribute.get("Name")
                    # The image's first chunk (a volume's: its first plane's).
                    image = (i,) if member is None else (member, i)
                    at = image + (0,) * (f[name].ndim - len(image))
                    chunk = f[name].id.get_chunk_info_by_coord(at)
                    seek = int(attribute.find("DataItem").get("Seek"))
                    if chunk.byte_offset != seek:
                        problems.append(f"image {i} of /{name} {at}: Seek {seek}, "
                                        f"chunk at {chunk.byte_offset}")
    for p in problems:
        print(f"{path}: {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
