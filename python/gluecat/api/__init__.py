"""gluecat.api"""
