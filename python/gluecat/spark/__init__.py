"""gluecat.spark"""
