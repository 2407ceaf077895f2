"""The trigger layer: does the skill's description make it fire when it should, and only then?"""
